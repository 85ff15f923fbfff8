import type { QueryParams } from '@sightline/properties';
import type { ParsedFunnelFilter } from './funnel-filter';
import { FunnelSqlBuilder } from './funnel.sql';
import { FunnelTrendsSqlBuilder } from './funnel-trends.sql';

/** Which of a funnel's actors a page lists. */
export interface FunnelActorsCondition {
  /** Steps: the furthest step reached is at least `atLeast`, or one of `in` (null: a funnel trend). */
  levels: { atLeast: number } | { in: number[] } | null;
  /** The breakdown value's texts (one per breakdown), or null for every value. */
  breakdownValue: string[] | null;
  /** Members of any of these cohorts only (a cohort breakdown asked for no one cohort). */
  anyOfCohorts: number[];
  /** Trends: the entrance period (as the trend SQL writes it) and whether its drop-offs are asked for. */
  period: { start: string; dropOff: boolean } | null;
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
): string {
  const all = [...where];
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

/** The actors of a funnel's steps, from the per-actor fold the step counts come from (actorsSql). */
export class FunnelActorsSqlBuilder extends FunnelSqlBuilder {
  actorIdsSql(condition: FunnelActorsCondition): string {
    const levels = condition.levels;
    const where: string[] = [];
    if (levels && 'atLeast' in levels) where.push(`level >= ${this.params.add(levels.atLeast, 'UInt32')}`);
    else if (levels) where.push(`level IN ${this.params.add(levels.in, 'Array(UInt32)')}`);
    return actorPageSql(this.actorsSql(), where, condition, this.input.filter, this.params, (id) => this.ports.cohortMembership(id, 'actor', this.params));
  }
}

/** The actors of a funnel trend's entrance period: converted, or (drop-off) entered but not converted. */
export class FunnelTrendActorsSqlBuilder extends FunnelTrendsSqlBuilder {
  actorIdsSql(condition: FunnelActorsCondition): string {
    const period = condition.period!;
    const where = [`b = ${this.params.add(period.start, 'String')}`, `outcome = ${period.dropOff ? -1 : 1}`];
    return actorPageSql(this.actorOutcomesSql(), where, condition, this.input.filter, this.params, (id) =>
      this.ports.cohortMembership(id, 'actor', this.params),
    );
  }
}
