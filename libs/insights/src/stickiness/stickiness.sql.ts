import { compilePropertyGroup, type PropertyGroup } from '@sightline/properties';
import type { QueryDateRange } from '../common/date-range';
import { EventsSql } from '../common/events-sql';
import type { QuerySqlPorts } from '../common/query-ports';
import type { SeriesInput } from '../common/series';
import { STICKINESS_OPERATORS, type StickinessOperator } from './stickiness-filter';

export interface StickinessSqlInput {
  series: SeriesInput;
  /** Query-wide filters (with the test-account filters when asked), ANDed with the series'. */
  properties: PropertyGroup;
  range: QueryDateRange;
  intervalCount: number;
  criteria: { operator: StickinessOperator; value: number } | null;
}

/** Which actors of one stickiness series a page lists: those active on `day` intervals (by `operator`). */
export interface StickinessActorsCondition {
  day: number;
  operator: StickinessOperator;
  limit: number;
  offset: number;
}

/** ClickHouse's unit names for age() (a window of intervalCount intervals counted back from date_to). */
const AGE_UNIT = { minute: 'minute', hour: 'hour', day: 'day', week: 'week', month: 'month' } as const;

/**
 * The SQL of one stickiness series over one period, as PostHog's StickinessQueryRunner builds it
 * (posthog/hogql_queries/insights/stickiness_query_runner.py): each actor's matching events
 * grouped by interval (an interval counts when its event count meets stickinessCriteria, else
 * when it has any), then the actors counted by how many intervals they were active on. The actor
 * is the person (merged persons once, deleted persons left out), the `$group_N` of a
 * `unique_group` math, or the value of a `hogql` math.
 */
export class StickinessSqlBuilder extends EventsSql {
  constructor(
    private readonly input: StickinessSqlInput,
    ports: QuerySqlPorts,
  ) {
    const { series, range } = input;
    super(
      {
        teamId: ports.teamId,
        nowMs: ports.nowMs,
        timezone: range.timezone,
        interval: range.interval,
        weekStartDay: range.weekStartDay,
        breakdowns: [],
        // PostHog's stickiness counts groups only for a unique_group math (its _aggregation_expressions).
        aggregationGroupTypeIndex: series.math === 'unique_group' ? series.math_group_type_index : null,
      },
      ports,
    );
  }

  /** The actor of an event: a hogql math's value, else the person or group (EventsSql.actorSql). */
  private actorExpression(): string {
    const { series } = this.input;
    if (series.math === 'hogql' && series.math_hogql) return this.ports.hogql(series.math_hogql, this.params, { allowAggregations: false });
    return this.actorSql();
  }

  /** The interval an event falls in: its bucket, or with intervalCount N its window of N intervals counted back from date_to. */
  private intervalKey(): string {
    const { range, intervalCount } = this.input;
    if (intervalCount === 1) return this.bucketSql('e.timestamp');
    const unit = this.params.add(AGE_UNIT[range.interval], 'String');
    const age = `age(${unit}, toTimeZone(e.timestamp, ${this.tz}), toTimeZone(${this.dateTime(range.to.toMillis())}, ${this.tz}))`;
    return `intDiv(${age}, ${this.params.add(intervalCount, 'UInt32')})`;
  }

  /** One row per actor: `actor` and `num_intervals`, the intervals it was active on. */
  private perActorSql(): string {
    const { series, range, criteria } = this.input;
    const ctx = this.compileContext();
    const where = [
      `e.team_id = ${this.team}`,
      `e.timestamp >= ${this.dateTime(range.eventsFrom.toMillis())}`,
      `e.timestamp <= ${this.dateTime(range.to.toMillis())}`,
    ];
    if (series.kind === 'events') {
      if (series.id !== null) where.push(`e.event = ${this.params.add(series.id, 'String')}`);
    } else where.push(this.ports.actionMatch(Number(series.id), ctx));
    where.push(compilePropertyGroup({ type: 'AND', values: [this.input.properties, series.properties] }, ctx));
    // A hogql actor is any value; persons and groups must exist (a group key, a person not deleted).
    if (!(series.math === 'hogql' && series.math_hogql)) where.push(this.actorPresentSql());
    const conditions = where.filter((p) => p !== '1').join('\n      AND ');
    // Without criteria an interval counts when it has any event: the actor's distinct intervals,
    // in one grouping. Criteria count the events of each interval first.
    const sql = criteria
      ? `SELECT actor, count() AS num_intervals FROM (
    SELECT ${this.actorExpression()} AS actor, ${this.intervalKey()} AS k
    {FROM}
    WHERE ${conditions}
    GROUP BY actor, k
    HAVING count() ${STICKINESS_OPERATORS[criteria.operator]} ${this.params.add(criteria.value, 'UInt64')}
  ) GROUP BY actor`
      : `SELECT ${this.actorExpression()} AS actor, uniqExact(${this.intervalKey()}) AS num_intervals
    {FROM}
    WHERE ${conditions}
    GROUP BY actor`;
    // Without criteria an interval counts when it has any event, so a redelivered event changes
    // nothing and the events need no FINAL; criteria count events, which must each count once.
    return sql.split('{FROM}').join(this.fromSql(sql, { fromMs: range.eventsFrom.toMillis(), toMs: range.to.toMillis() }, { final: criteria !== null }));
  }

  /** How many actors were active on each number of intervals: rows `num_intervals`, `actors`. */
  countsSql(): { sql: string; params: Record<string, unknown> } {
    const sql = `SELECT num_intervals, count() AS actors FROM (${this.perActorSql()}) GROUP BY num_intervals ORDER BY num_intervals`;
    return { sql, params: this.params.values };
  }

  /** A page of the actors of one bar (plus one more, telling there are more), ordered by actor id: rows `actor_id`. */
  actorsSql(condition: StickinessActorsCondition): { sql: string; params: Record<string, unknown> } {
    const day = this.params.add(condition.day, 'UInt64');
    const limit = this.params.add(condition.limit + 1, 'UInt64');
    const offset = this.params.add(condition.offset, 'UInt64');
    const sql = `SELECT toString(actor) AS actor_id FROM (${this.perActorSql()})
  WHERE num_intervals ${STICKINESS_OPERATORS[condition.operator]} ${day}
  ORDER BY actor_id LIMIT ${limit} OFFSET ${offset}`;
    return { sql, params: this.params.values };
  }
}
