import { compilePropertyGroup, type PropertyGroup } from '@sightline/properties';
import type { DateTime } from 'luxon';
import { formatBucketDay, type QueryDateRange } from '../common/date-range';
import { EventsSql } from '../common/events-sql';
import type { QuerySqlPorts } from '../common/query-ports';
import type { SeriesInput } from '../common/series';
import type { LifecycleStatus } from './lifecycle-filter';

export interface LifecycleSqlInput {
  /** Every series' event and filters apply (PostHog ANDs them). */
  series: SeriesInput[];
  /** Query-wide filters (with the test-account filters when asked). */
  properties: PropertyGroup;
  range: QueryDateRange;
  aggregationGroupTypeIndex: number | null;
}

/** One interval's step, by interval: the function adding one to a bucket (a Date for day, week and month, a DateTime below). */
const ADD_ONE = { minute: 'addMinutes', hour: 'addHours', day: 'addDays', week: 'addWeeks', month: 'addMonths' } as const;

/**
 * The SQL of a lifecycle, as PostHog's LifecycleQueryRunner derives it
 * (posthog/hogql_queries/insights/lifecycle_query_runner.py): per actor, the sorted intervals it
 * was active in (from one interval before the range to one after) and the interval it was
 * created in (a person's created_at; a group's for group aggregation). Each active interval is
 * `new` when it is the first and the creation interval, `returning` when the one before was
 * active too, else `resurrecting`; the interval after each active one that is not active is
 * `dormant`. Statuses are counted per interval of the range, each actor once.
 */
export class LifecycleSqlBuilder extends EventsSql {
  constructor(
    private readonly input: LifecycleSqlInput,
    ports: QuerySqlPorts,
  ) {
    const { range } = input;
    super(
      {
        teamId: ports.teamId,
        nowMs: ports.nowMs,
        timezone: range.timezone,
        interval: range.interval,
        weekStartDay: range.weekStartDay,
        breakdowns: [],
        aggregationGroupTypeIndex: input.aggregationGroupTypeIndex,
      },
      ports,
    );
  }

  /** Rows `actor`, `start_of_period` (as days[i] writes it) and `status`, one per actor and status interval in the range. */
  private statusesSql(): string {
    const { range, series } = this.input;
    const add = ADD_ONE[range.interval];
    const first = range.buckets[0]!;
    const last = range.buckets[range.buckets.length - 1]!;
    // Events from one interval before the first bucket to one after the last: the status of the
    // first bucket needs the one before, a dormant last bucket the one after.
    const fromMs = first.minus({ [`${range.interval}s`]: 1 }).toMillis();
    const toMs = last.plus({ [`${range.interval}s`]: 1 }).toMillis();
    const ctx = this.compileContext();
    const where = [`e.team_id = ${this.team}`, `e.timestamp >= ${this.dateTime(fromMs)}`, `e.timestamp < ${this.dateTime(toMs)}`];
    // Personless events ($process_person_profile false, which the worker writes as person_mode
    // propertyless) have no lifecycle, as in PostHog; the column is read rather than the JSON.
    // The active intervals are a set, so a redelivered event changes nothing: no FINAL.
    // (IN rather than !=: ClickHouse filters an Enum8 by a set several times faster.)
    where.push(`e.person_mode IN ('full', 'force_upgrade')`);
    for (const s of series) {
      if (s.kind === 'events') {
        if (s.id !== null) where.push(`e.event = ${this.params.add(s.id, 'String')}`);
      } else where.push(this.ports.actionMatch(Number(s.id), ctx));
    }
    where.push(compilePropertyGroup({ type: 'AND', values: [this.input.properties, ...series.map((s) => s.properties)] }, ctx));
    where.push(this.actorPresentSql());
    const perActor = `SELECT ${this.actorSql()} AS actor, arraySort(groupUniqArray(${this.bucketSql('e.timestamp')})) AS activity
    {FROM}
    WHERE ${where.filter((p) => p !== '1').join('\n      AND ')}
    GROUP BY actor`;
    const withCreated = `SELECT a.actor AS actor, a.activity AS activity, ${this.bucketSql('c.created_at')} AS created
    FROM (${perActor.split('{FROM}').join(this.fromSql(perActor, { fromMs, toMs }, { final: false }))}) AS a
    LEFT JOIN (${this.createdAtSql()}) AS c ON c.actor = a.actor`;
    // A bucket start as the buckets are typed: a Date (local calendar day) or a DateTime (an instant).
    const hourly = range.interval === 'hour' || range.interval === 'minute';
    const bound = (at: DateTime) =>
      hourly
        ? `toDateTime(${this.params.add(Math.floor(at.toMillis() / 1000), 'Int64')}, ${this.tz})`
        : this.params.add(formatBucketDay(at, range.interval), 'Date');
    // previous[i]: the creation interval for the first activity, else the activity before.
    return `SELECT actor, pair.1 AS start_of_period, pair.2 AS status FROM (
    SELECT actor, activity,
      arrayPopBack(arrayPushFront(activity, created)) AS previous,
      arrayMap((p, c, i) -> if(p = c, 'new', if(i != 1 AND ${add}(p, 1) = c, 'returning', 'resurrecting')), previous, activity, arrayEnumerate(activity)) AS initial,
      arrayFilter((c, i) -> i = length(activity) OR ${add}(c, 1) != activity[i + 1], activity, arrayEnumerate(activity)) AS went_dormant,
      arrayConcat(arrayZip(activity, initial), arrayMap(c -> (${add}(c, 1), 'dormant'), went_dormant)) AS pairs
    FROM (${withCreated})
  )
  ARRAY JOIN pairs AS pair
  WHERE pair.1 >= ${bound(first)} AND pair.1 <= ${bound(last)}`;
  }

  /** Each actor's creation time: the person's created_at (latest version), or the group's. */
  private createdAtSql(): string {
    const index = this.input.aggregationGroupTypeIndex;
    if (index === null) return `SELECT id AS actor, argMax(created_at, version) AS created_at FROM person WHERE team_id = ${this.team} GROUP BY id`;
    return `SELECT group_key AS actor, argMax(created_at, version) AS created_at FROM groups
      WHERE team_id = ${this.team} AND group_type_index = ${this.params.add(index, 'UInt8')} GROUP BY group_key`;
  }

  /** Rows `start_of_period` (text), `status`, `actors`: the distinct actors of each status per interval. */
  countsSql(): { sql: string; params: Record<string, unknown> } {
    // An actor has one status per interval (its active intervals are distinct, dormant ones are not active): count() counts actors.
    const sql = `SELECT toString(start_of_period) AS start_of_period, status, count() AS actors FROM (${this.statusesSql()}) GROUP BY start_of_period, status`;
    return { sql, params: this.params.values };
  }

  /** A page of the actors (plus one more) of a status and/or an interval (as days[i] writes it), ordered by actor id: rows `actor_id`. */
  actorsSql(condition: { day: string | null; status: LifecycleStatus | null; limit: number; offset: number }): {
    sql: string;
    params: Record<string, unknown>;
  } {
    const where: string[] = [];
    if (condition.day !== null) where.push(`toString(start_of_period) = ${this.params.add(condition.day, 'String')}`);
    if (condition.status !== null) where.push(`status = ${this.params.add(condition.status, 'String')}`);
    const limit = this.params.add(condition.limit + 1, 'UInt64');
    const offset = this.params.add(condition.offset, 'UInt64');
    const sql = `SELECT DISTINCT toString(actor) AS actor_id FROM (${this.statusesSql()})${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
  ORDER BY actor_id LIMIT ${limit} OFFSET ${offset}`;
    return { sql, params: this.params.values };
  }
}
