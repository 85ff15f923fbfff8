import { globalPrefix, SINGLE_SERVER } from '@sightline/clickhouse';
import { compilePropertyGroup, filtersOf, type PropertyGroup } from '@sightline/properties';
import { EventsSql, PERSON_ID } from '../common/events-sql';
import type { QuerySqlPorts } from '../common/query-ports';
import { actorSearchSql } from '../funnels/funnel-actors.sql';
import type { RetentionDateRange } from './retention-date-range';
import type { ParsedRetentionFilter, RetentionEntity } from './retention-filter';

export interface RetentionSqlInput {
  filter: ParsedRetentionFilter;
  range: RetentionDateRange;
  /** Query-wide filters, with the test-account filters when asked. */
  properties: PropertyGroup;
}

/** One cell's actors: a start interval (and breakdown value), a page of them. */
export interface RetentionActorsCondition {
  startIndex: number;
  breakdownValue: string | null;
  /** Only actors matching this text, as PostHog's actor search (actorSearchSql). */
  search: string | null;
  limit: number;
  offset: number;
}

const dayNumber = (at: { year: number; month: number; day: number }) => Date.UTC(at.year, at.month - 1, at.day) / 86_400_000;

/**
 * PostHog's retention, as retention_query_runner.py computes it, in three steps:
 * 1. per actor (and breakdown value): the indexes of the intervals with a target event (for
 *    first-time retention only the interval of the actor's first-ever target event, when in the
 *    range) and of those with a returning event (at least `minimumOccurrences` of them);
 * 2. per actor and start interval: the offsets counted, 0 (the start itself) and each later
 *    interval with a return within the lookahead; cumulative retention counts every offset up to
 *    the furthest one;
 * 3. actors per (start interval, offset[, breakdown value]).
 * Interval indexes are computed from each event's day, week or month number in the project's
 * timezone (weeks from its week start day), hours from the instant.
 */
export class RetentionSqlBuilder extends EventsSql {
  constructor(
    private readonly input: RetentionSqlInput,
    ports: QuerySqlPorts,
  ) {
    super(
      {
        teamId: ports.teamId,
        nowMs: ports.nowMs,
        timezone: input.range.timezone,
        interval: input.range.interval,
        weekStartDay: input.range.weekStartDay,
        breakdowns: input.filter.breakdowns,
        aggregationGroupTypeIndex: input.filter.aggregation_group_type_index,
      },
      ports,
    );
  }

  /** The index of the interval holding `timestamp` (counted from the first start interval), -1 before it. */
  private intervalIndexSql(timestamp: string): string {
    const { range } = this.input;
    const from = range.from;
    const mode = range.weekStartDay === 1 ? 1 : 0;
    switch (range.interval) {
      case 'hour':
        return `if(${timestamp} < ${this.fromSqlParam()}, -1, intDiv(toUnixTimestamp(${timestamp}) - ${this.params.add(Math.floor(from.toSeconds()), 'Int64')}, 3600))`;
      case 'day':
        return `toInt64(toRelativeDayNum(${timestamp}, ${this.tz})) - ${this.params.add(dayNumber(from), 'Int64')}`;
      case 'week':
        return `intDiv(toInt64(toRelativeDayNum(toStartOfWeek(${timestamp}, ${mode}, ${this.tz}))) - ${this.params.add(dayNumber(from), 'Int64')}, 7)`;
      case 'month':
        return `toInt64(toRelativeMonthNum(${timestamp}, ${this.tz})) - ${this.params.add(from.year * 12 + from.month, 'Int64')}`;
    }
  }

  private fromParam: string | null = null;
  private fromSqlParam(): string {
    return (this.fromParam ??= this.dateTime(this.input.range.from.toMillis()));
  }

  private toParam: string | null = null;
  private toSqlParam(): string {
    return (this.toParam ??= this.dateTime(this.input.range.to.toMillis()));
  }

  /** The event matches a target or returning entity: its event (or action) and its own filters. */
  private entitySql(entity: RetentionEntity): string {
    const ctx = this.compileContext();
    const parts: string[] = [];
    if (entity.kind === 'actions') parts.push(this.ports.actionMatch(Number(entity.id), ctx));
    else if (entity.id !== null) parts.push(`e.event = ${this.params.add(entity.id, 'String')}`);
    if (filtersOf(entity.properties).length > 0) parts.push(compilePropertyGroup(entity.properties, ctx));
    return parts.length === 0 ? '1' : parts.length === 1 ? parts[0]! : `(${parts.join(' AND ')})`;
  }

  /**
   * Per actor (and breakdown value): `starts` and `returns`, the interval indexes of its target
   * and returning events. `cohortId`: only the members of this cohort, labelled with it.
   */
  private actorIntervalsSql(cohort: { id: number | string } | null): string {
    const { filter } = this.input;
    const start = this.entitySql(filter.target);
    const ret = this.entitySql(filter.returning);
    const inRange = `e.timestamp >= ${this.fromSqlParam()} AND e.timestamp < ${this.toSqlParam()}`;
    const index = this.intervalIndexSql('e.timestamp');
    const where = [`e.team_id = ${this.team}`, `(${start} OR ${ret})`, this.actorPresentSql()];
    const filters = compilePropertyGroup(this.input.properties, this.compileContext());
    if (filters !== '1') where.push(filters);
    if (filter.retentionType === 'retention_first_time') {
      // The first-ever target event is looked for before the range too (PostHog reads all time).
      where.push(`e.timestamp < ${this.toSqlParam()}`);
    } else where.push(inRange);
    if (cohort !== null && cohort.id !== 'all' && Number(cohort.id) !== 0) where.push(this.ports.cohortMembership(Number(cohort.id), PERSON_ID, this.params));

    let starts = `groupUniqArrayIf(${index}, ${start} AND ${inRange})`;
    // First time: the interval of the actor's first-ever target event, when it is in the range.
    const firstStart = filter.retentionType === 'retention_first_time' ? [`minIf(e.timestamp, ${start}) AS first_start`] : [];
    if (firstStart.length > 0) {
      starts = `if(first_start >= ${this.fromSqlParam()} AND first_start < ${this.toSqlParam()}, [${this.intervalIndexSql('first_start')}], CAST([], 'Array(Int64)'))`;
    }
    // With a minimum of occurrences, every returning event's interval is kept (not only distinct ones) to count them.
    const returnEvents = filter.minimumOccurrences > 1 ? [`groupArrayIf(${index}, ${ret} AND ${inRange}) AS return_events`] : [];
    const returns =
      filter.minimumOccurrences > 1
        ? `arrayFilter(i -> countEqual(return_events, i) >= ${this.params.add(filter.minimumOccurrences, 'UInt32')}, arrayDistinct(return_events))`
        : `groupUniqArrayIf(${index}, ${ret} AND ${inRange})`;
    const breakdown = this.breakdownSql(cohort);
    const select = [
      `${this.actorSql()} AS actor_id`,
      ...(breakdown ? [`${breakdown} AS breakdown_value`] : []),
      ...firstStart,
      `${starts} AS starts`,
      ...returnEvents,
      `${returns} AS returns`,
    ];
    const groupBy = ['actor_id', ...(breakdown ? ['breakdown_value'] : [])];
    const body = `SELECT ${select.join(',\n    ')}\n  WHERE ${where.join('\n    AND ')}\n  GROUP BY ${groupBy.join(', ')}`;
    const from = this.fromSql(body, { fromMs: this.input.range.from.toMillis(), toMs: this.input.range.to.toMillis() });
    return `SELECT ${select.join(',\n    ')}\n  ${from}\n  WHERE ${where.join('\n    AND ')}\n  GROUP BY ${groupBy.join(', ')}`;
  }

  /** The breakdown value of an actor's events: the property as text ('' when missing), or the cohort. */
  private breakdownSql(cohort: { id: number | string } | null): string | null {
    if (cohort !== null) return this.params.add(cohort.id === 'all' ? '0' : String(cohort.id), 'String');
    const breakdown = this.input.filter.breakdowns[0];
    return breakdown ? this.breakdownValueSql(breakdown, 0) : null;
  }

  private get hasBreakdown(): boolean {
    return this.input.filter.breakdowns.length > 0;
  }

  /** Per actor, start interval (and breakdown value): the offsets it counts in, exploded to one row each. */
  private actorOffsetsSql(cumulative: boolean): string {
    const breakdowns = this.input.filter.breakdowns;
    const cohorts = breakdowns.length > 0 && breakdowns[0]!.type === 'cohort' ? breakdowns.map((b) => ({ id: b.property })) : null;
    const perActor = cohorts ? cohorts.map((c) => this.actorIntervalsSql(c)).join('\n  UNION ALL\n  ') : this.actorIntervalsSql(null);
    const lookahead = this.params.add(this.input.range.lookahead, 'Int64');
    const bv = this.hasBreakdown ? ', breakdown_value' : '';
    // Offset 0 is the start interval itself; a return counts in a later interval within the lookahead.
    const offsets = `arrayConcat([toInt64(0)], arrayFilter(o -> o > 0 AND o < ${lookahead}, arrayMap(r -> toInt64(r) - start_index, returns)))`;
    const offset = cumulative ? `arrayJoin(range(0, toUInt64(arrayMax(${offsets}) + 1)))` : `arrayJoin(${offsets})`;
    return `SELECT actor_id${bv}, start_index, toInt64(${offset}) AS intervals_from_base
FROM (
  SELECT actor_id${bv}, toInt64(start_index) AS start_index, returns
  FROM (${perActor})
  ARRAY JOIN starts AS start_index
)`;
  }

  /** The retention table: actors per (start interval, offset[, breakdown value]). */
  countsSql(): string {
    const bv = this.hasBreakdown ? ', breakdown_value' : '';
    return `SELECT start_index, intervals_from_base${bv}, count() AS count
FROM (${this.actorOffsetsSql(this.input.filter.cumulative)})
GROUP BY start_index, intervals_from_base${bv}
ORDER BY ${this.hasBreakdown ? 'breakdown_value, ' : ''}start_index, intervals_from_base`;
  }

  /**
   * The actors of one start interval (and breakdown value), most appearances first then by id
   * (PostHog's retention actors order), each with its sorted offsets; one more than the page
   * asks, to tell there are more.
   */
  actorsSql(condition: RetentionActorsCondition): string {
    const where = [`start_index = ${this.params.add(condition.startIndex, 'Int64')}`];
    if (condition.breakdownValue !== null && this.hasBreakdown) where.push(`breakdown_value = ${this.params.add(condition.breakdownValue, 'String')}`);
    if (condition.search !== null) {
      const pattern = this.params.add(`%${condition.search}%`, 'String');
      const filter = { aggregation_group_type_index: this.input.filter.aggregation_group_type_index, aggregateByHogQL: null };
      where.push(actorSearchSql(filter, this.params, this.team, pattern, globalPrefix(this.ports.layout ?? SINGLE_SERVER)));
    }
    return `SELECT toString(actor) AS actor_id, arraySort(groupArray(intervals_from_base)) AS appearances
FROM (SELECT actor_id AS actor, start_index, intervals_from_base${this.hasBreakdown ? ', breakdown_value' : ''} FROM (${this.actorOffsetsSql(false)}))
WHERE ${where.join(' AND ')}
GROUP BY actor
ORDER BY length(appearances) DESC, actor
LIMIT ${this.params.add(condition.limit + 1, 'UInt64')} OFFSET ${this.params.add(condition.offset, 'UInt64')}`;
  }
}
