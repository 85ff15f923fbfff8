import { globalPrefix, SINGLE_SERVER } from '@sightline/clickhouse';
import type { QueryParams } from '@sightline/properties';
import type { ParsedFunnelFilter } from './funnel-filter';
import { FunnelSqlBuilder } from './funnel.sql';
import { FunnelTrendsSqlBuilder } from './funnel-trends.sql';

/** Which of a funnel's actors a page lists. */
export interface FunnelActorsCondition {
  /** Steps: the furthest step reached is at least `atLeast`, or one of `in` (null: a funnel trend). */
  levels: { atLeast: number } | { in: number[]; dropOffAt?: number } | null;
  /** The breakdown value's texts (one per breakdown), or null for every value. */
  breakdownValue: string[] | null;
  /** Members of any of these cohorts only (a cohort breakdown asked for no one cohort). */
  anyOfCohorts: number[];
  /** Trends: the entrance period (as the trend SQL writes it) and whether its drop-offs are asked for. */
  period: { start: string; dropOff: boolean } | null;
  /** Only actors matching this text (FunnelActorsPage.search). */
  search: string | null;
  limit: number;
  offset: number;
}

/**
 * One page of distinct actor ids (plus one more, telling whether there are more) from rows with
 * `actor` and `bv`, filtered by `where`, ordered by actor id (PostHog's funnel actor queries
 * order by aggregation_target).
 */
function actorPageSql(
  rows: string,
  where: string[],
  condition: FunnelActorsCondition,
  filter: ParsedFunnelFilter,
  params: QueryParams,
  cohortMembership: (cohortId: number) => string,
  searchSql: (pattern: string) => string,
): string {
  const all = [...where];
  if (condition.search !== null) all.push(searchSql(params.add(`%${condition.search}%`, 'String')));
  if (condition.breakdownValue !== null) {
    const value = filter.breakdownValueIsList ? params.add(condition.breakdownValue, 'Array(String)') : params.add(condition.breakdownValue[0] ?? '', 'String');
    all.push(`bv = ${value}`);
  }
  if (condition.anyOfCohorts.length > 0) all.push(`(${condition.anyOfCohorts.map((id) => cohortMembership(id)).join(' OR ')})`);
  const limit = params.add(condition.limit + 1, 'UInt64');
  const offset = params.add(condition.offset, 'UInt64');
  return `SELECT toString(actor) AS actor_id FROM (${rows})
    ${all.length ? `WHERE ${all.join(' AND ')}` : ''}
    GROUP BY actor ORDER BY actor LIMIT ${limit} OFFSET ${offset}`;
}

/**
 * Whether an actor matches a search (`pattern`: a bound `%text%`), as PostHog's actor strategies
 * search: a person by id, a distinct id, or its `email` or `name` property (latest version); a
 * group by key or `name` property; a funnel_aggregate_by_hogql value by itself.
 */
export function actorSearchSql(
  filter: Pick<ParsedFunnelFilter, 'aggregation_group_type_index' | 'aggregateByHogQL'>,
  params: QueryParams,
  team: string,
  pattern: string,
  global: string,
): string {
  const groupIndex = filter.aggregation_group_type_index;
  const named = (props: string) => `JSONExtractString(${props}, 'name') ILIKE ${pattern}`;
  if (groupIndex !== null) {
    return `(actor ILIKE ${pattern} OR actor ${global}IN (
        SELECT group_key FROM (SELECT group_key, argMax(group_properties, version) AS props FROM groups
          WHERE team_id = ${team} AND group_type_index = ${params.add(groupIndex, 'UInt8')} GROUP BY group_key)
        WHERE ${named('props')}))`;
  }
  if (filter.aggregateByHogQL !== null) return `actor ILIKE ${pattern}`;
  return `(toString(actor) ILIKE ${pattern}
      OR actor ${global}IN (
        SELECT person_uuid FROM (SELECT id AS person_uuid, argMax(properties, version) AS props FROM person WHERE team_id = ${team} GROUP BY id)
        WHERE JSONExtractString(props, 'email') ILIKE ${pattern} OR ${named('props')})
      OR actor ${global}IN (
        SELECT person_uuid FROM (
          SELECT distinct_id, argMax(person_id, version) AS person_uuid, argMax(is_deleted, version) AS deleted FROM person_distinct_id2
          WHERE team_id = ${team} AND distinct_id ILIKE ${pattern} GROUP BY distinct_id)
        WHERE deleted = 0))`;
}

/** The actors of a funnel's steps, from the per-actor fold the step counts come from (actorsSql). */
export class FunnelActorsSqlBuilder extends FunnelSqlBuilder {
  actorIdsSql(condition: FunnelActorsCondition): string {
    const levels = condition.levels;
    const where: string[] = [];
    // With optional steps a step counts the actors whose furthest chain took it (`reached`, bit
    // per step), so its actors are those, and its drop-offs took the step before but not it.
    const optional = this.optionalSteps().length > 0;
    const took = (step: number) => `bitTest(reached, ${this.params.add(step - 1, 'UInt8')})`;
    if (levels && 'atLeast' in levels) where.push(optional ? took(levels.atLeast) : `level >= ${this.params.add(levels.atLeast, 'UInt32')}`);
    else if (levels && optional && levels.dropOffAt !== undefined) where.push(`${took(levels.dropOffAt - 1)} AND NOT ${took(levels.dropOffAt)}`);
    else if (levels) where.push(`level IN ${this.params.add(levels.in, 'Array(UInt32)')}`);
    return actorPageSql(
      this.actorsSql(),
      where,
      condition,
      this.input.filter,
      this.params,
      (id) => this.ports.cohortMembership(id, 'actor', this.params),
      (pattern) => actorSearchSql(this.input.filter, this.params, this.team, pattern, globalPrefix(this.ports.layout ?? SINGLE_SERVER)),
    );
  }
}

/** The actors of a funnel trend's entrance period: converted, or (drop-off) entered but not converted. */
export class FunnelTrendActorsSqlBuilder extends FunnelTrendsSqlBuilder {
  actorIdsSql(condition: FunnelActorsCondition): string {
    const period = condition.period!;
    const where = [`b = ${this.params.add(period.start, 'String')}`, `outcome = ${period.dropOff ? -1 : 1}`];
    return actorPageSql(
      this.actorOutcomesSql(),
      where,
      condition,
      this.input.filter,
      this.params,
      (id) => this.ports.cohortMembership(id, 'actor', this.params),
      (pattern) => actorSearchSql(this.input.filter, this.params, this.team, pattern, globalPrefix(this.ports.layout ?? SINGLE_SERVER)),
    );
  }
}
