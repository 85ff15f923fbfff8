import { compilePropertyGroup, propertyTextSql, type PropertyGroup } from '@sightline/properties';
import { formatBucketDay, type QueryDateRange } from '../common/date-range';
import {
  BREAKDOWN_NULL,
  BREAKDOWN_OTHER,
  EventsSql,
  PERSON_ID,
  QueryInputError,
  SESSION_DURATION,
  SESSION_ID,
  type BreakdownInput,
  type HistogramBins,
} from '../common/events-sql';
import type { QuerySqlPorts } from '../common/query-ports';
import { COUNT_PER_ACTOR_MATHS, PROPERTY_MATHS, type SeriesInput } from '../common/series';

/** How one breakdown's value picks a point's actors (SeriesSqlBuilder.breakdownMatchSql). */
export type BreakdownMatch = { kind: 'value'; value: string } | { kind: 'range'; from: number; to: number } | { kind: 'no_number' } | { kind: 'any' };

export interface SeriesQuery {
  sql: string;
  params: Record<string, unknown>;
  /** Rows carry a bucket key `b` (time series) or not (total value). */
  timeSeries: boolean;
}

export interface SeriesQueryInput {
  series: SeriesInput;
  /** Query-wide filters (with test-account filters when asked), ANDed with the series'. */
  properties: PropertyGroup;
  range: QueryDateRange;
  breakdowns: BreakdownInput[];
  /** A cohort breakdown's cohort for this query (null: all users / no cohort breakdown). */
  cohortId: number | null;
  breakdownLimit: number;
  /** Histogram bins per breakdown (when histogram_bin_count is set), computed from a first query. */
  histogramBins?: (HistogramBins | null)[];
  aggregationGroupTypeIndex: number | null;
  totalValue: boolean;
  /** A cumulative line graph: unique users and groups count once, in the first bucket they appear. */
  cumulative?: boolean;
}

/** Numeric levels of quantile maths and count-per-actor maths. */
const QUANTILE_LEVEL: Record<string, number> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 };

const isPropertyMath = (math: string) => (PROPERTY_MATHS as readonly string[]).includes(math);
const isCountPerActor = (math: string) => (COUNT_PER_ACTOR_MATHS as readonly string[]).includes(math);
const countsActors = (math: string) =>
  isCountPerActor(math) || ['dau', 'weekly_active', 'monthly_active', 'first_time_for_user', 'first_matching_event_for_user'].includes(math);

/** An aggregate over values `x`: sum/avg/min/max/median/pNN. */
function numericAggregate(kind: string, x: string): string {
  if (kind in QUANTILE_LEVEL) return `quantile(${QUANTILE_LEVEL[kind]})(${x})`;
  return `${kind}(${x})`;
}

/** Builds the SQL for one series of a trend (one period, one cohort of a cohort breakdown). */
export class SeriesSqlBuilder extends EventsSql {
  constructor(
    private readonly input: SeriesQueryInput,
    ports: QuerySqlPorts,
  ) {
    super(
      {
        teamId: ports.teamId,
        nowMs: ports.nowMs,
        timezone: input.range.timezone,
        interval: input.range.interval,
        weekStartDay: input.range.weekStartDay,
        breakdowns: input.breakdowns,
        histogramBins: input.histogramBins,
        aggregationGroupTypeIndex: input.aggregationGroupTypeIndex,
      },
      ports,
    );
  }

  /** Every condition an event must meet, with a time window. */
  private whereSql(fromSql: string | null, toSql: string, match: { withFilters: boolean }): string {
    const ctx = this.compileContext();
    const series = this.input.series;
    const parts = [`e.team_id = ${this.team}`, `e.timestamp <= ${toSql}`];
    if (fromSql) parts.push(`e.timestamp >= ${fromSql}`);
    if (series.kind === 'events') {
      if (series.id !== null) parts.push(`e.event = ${this.params.add(series.id, 'String')}`);
    } else parts.push(this.ports.actionMatch(Number(series.id), ctx));
    if (match.withFilters) parts.push(this.filtersSql());
    // Counting actors counts only events that have one: a group of the aggregated type, or a person not deleted.
    if (this.input.aggregationGroupTypeIndex !== null || countsActors(series.math)) parts.push(this.actorPresentSql());
    if (this.input.cohortId !== null) parts.push(this.ports.cohortMembership(this.input.cohortId, PERSON_ID, this.params));
    return parts.filter((p) => p !== '1').join('\n  AND ');
  }

  private filtersSql(): string {
    return compilePropertyGroup({ type: 'AND', values: [this.input.properties, this.input.series.properties] }, this.compileContext());
  }

  /** The group key a unique_group math counts ('' when the event has none). */
  private groupKeySql(): string {
    return `JSONExtractString(e.properties, ${this.params.add(`$group_${this.input.series.math_group_type_index}`, 'String')})`;
  }

  /** The aggregate of a bucket (or the whole range) for maths computed straight from events. */
  private directAggregate(): string {
    const s = this.input.series;
    switch (s.math) {
      case 'total':
        return 'count()';
      case 'dau':
      case 'weekly_active':
      case 'monthly_active':
        return `uniqExact(${this.actorSql()})`;
      case 'unique_session':
        return `uniqExactIf(${SESSION_ID}, ${SESSION_ID} != '')`;
      case 'unique_group': {
        const g = this.groupKeySql();
        return `uniqExactIf(${g}, ${g} != '')`;
      }
      case 'hogql':
        return this.ports.hogql(s.math_hogql!, this.params, { allowAggregations: true });
      default: {
        if (isPropertyMath(s.math)) {
          const column = s.math_property_type === 'person_properties' ? 'e.person_properties' : 'e.properties';
          const number = `toFloat64OrNull(${propertyTextSql(column, this.params.add(s.math_property!, 'String'))})`;
          return `ifNull(${numericAggregate(s.math, number)}, 0)`;
        }
        throw new QueryInputError(null, `math "${s.math}" cannot be computed directly.`);
      }
    }
  }

  /**
   * A property math over `$session_duration`, PostHog's session-level aggregation
   * (trends_query_builder.py, `session_duration_math_property_wrapper`): each session counts
   * once per bucket and breakdown value it has a matching event in, with its whole duration; the
   * math aggregates those. finish() ranks breakdown values as for any other math.
   */
  private sessionDurationSql(bv: string | null, fromMs: number, toMs: number): SeriesQuery {
    const { totalValue, series } = this.input;
    const keys = [totalValue ? null : 'b', bv ? 'bv' : null].filter((k): k is string => k !== null);
    const perSession = `SELECT ${totalValue ? '' : `${this.bucketSql('e.timestamp')} AS b, `}${bv ? `${bv} AS bv, ` : ''}${SESSION_ID} AS session,
    any(${SESSION_DURATION}) AS duration
  {FROM}
  WHERE ${this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true })}
  GROUP BY ${[...keys, 'session'].join(', ')}`;
    const sql = `SELECT ${keys.map((k) => `${k}, `).join('')}ifNull(${numericAggregate(series.math, 'toFloat64(duration)')}, 0) AS v
FROM (${perSession})${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`;
    return this.finish(sql, bv, fromMs, toMs);
  }

  build(): SeriesQuery {
    const { range, totalValue } = this.input;
    const math = this.input.series.math;
    // Breakdown values as they are; finish() ranks them and folds those past the limit into "other".
    const bv = this.rawBreakdownArraySql();
    // PostHog's date_from_with_adjusted_start_of_interval: a week that starts before date_from
    // counts nothing before it (test_interval_rounding), `-24h` counts from 24 hours ago.
    const fromMs = range.eventsFrom.toMillis();
    const toMs = range.to.toMillis();
    if (isPropertyMath(math) && this.input.series.math_property === '$session_duration') return this.sessionDurationSql(bv, fromMs, toMs);
    let inner: string;
    // Active-user maths look back a week or 30 days from each bucket's end.
    const windowDays = math === 'weekly_active' ? 7 : math === 'monthly_active' ? 30 : 0;
    const windowed = windowDays > 0 && (totalValue || range.interval === 'day' || range.interval === 'hour' || range.interval === 'minute');
    const bucket = this.bucketSql('e.timestamp');
    const groupKeys = [totalValue ? null : 'b', bv ? 'bv' : null].filter((k): k is string => k !== null);
    const select = (keys: string[]) => keys.join(', ');

    if (isCountPerActor(math)) {
      const kind = math.replace('_count_per_actor', '');
      const keys = [...groupKeys, 'actor'];
      inner = `SELECT ${totalValue ? '' : `${bucket} AS b, `}${bv ? `${bv} AS bv, ` : ''}${this.actorSql()} AS actor, count() AS c
  ${'{FROM}'}
  WHERE ${this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true })}
  GROUP BY ${select(keys)}`;
      return this.finish(
        `SELECT ${groupKeys.length ? `${select(groupKeys)}, ` : ''}${numericAggregate(kind, 'c')} AS v FROM (${inner})${groupKeys.length ? ` GROUP BY ${select(groupKeys)}` : ''}`,
        bv,
        fromMs,
        toMs,
      );
    }

    if (math === 'first_time_for_user' || math === 'first_matching_event_for_user') {
      // first_time_for_user: the actor's first-ever event of the series, counted when it also
      // matches the filters; first_matching_event_for_user: the first event that matches them.
      const matching = math === 'first_matching_event_for_user';
      const where = this.whereSql(null, this.dateTime(toMs), { withFilters: matching });
      const matches = matching ? '1' : this.filtersSql();
      inner = `SELECT ${this.actorSql()} AS actor, min(e.timestamp) AS first_ts, argMin(${matches}, e.timestamp) AS first_matches${bv ? `, argMin(${bv}, e.timestamp) AS bv` : ''}
  ${'{FROM}'}
  WHERE ${where}
  GROUP BY actor
  HAVING first_ts >= ${this.dateTime(fromMs)} AND first_matches`;
      const outerBucket = this.bucketSql('first_ts');
      return this.finish(
        `SELECT ${totalValue ? '' : `${outerBucket} AS b, `}${bv ? 'bv, ' : ''}count() AS v FROM (${inner})${groupKeys.length ? ` GROUP BY ${select(groupKeys)}` : ''}`,
        bv,
        fromMs,
        toMs,
      );
    }

    if (this.input.cumulative && !totalValue && (math === 'dau' || math === 'unique_group')) {
      // PostHog's cumulative unique users (or groups): each actor counts once, in the first
      // bucket of the range it appears in (test_trends_per_day_dau_cumulative).
      const actor = math === 'dau' ? this.actorSql() : this.groupKeySql();
      inner = `SELECT ${bv ? `${bv} AS bv, ` : ''}${actor} AS actor, min(${bucket}) AS b
  ${'{FROM}'}
  WHERE ${this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true })}${math === 'unique_group' ? ` AND ${actor} != ''` : ''}
  GROUP BY ${bv ? 'bv, ' : ''}actor`;
      return this.finish(`SELECT b, ${bv ? 'bv, ' : ''}count() AS v FROM (${inner}) GROUP BY ${select(groupKeys)}`, bv, fromMs, toMs);
    }

    if (windowed && totalValue) {
      // One number: the actors active in the window that ends with the range.
      const windowFrom = toMs - windowDays * 86_400_000 + 1;
      const sql = `SELECT ${bv ? `${bv} AS bv, ` : ''}${this.directAggregate()} AS v
  ${'{FROM}'}
  WHERE ${this.whereSql(this.dateTime(windowFrom), this.dateTime(toMs), { withFilters: true })}${bv ? '\n  GROUP BY bv' : ''}`;
      return this.finish(sql, bv, windowFrom, toMs);
    }
    if (windowed) {
      const windowMs = windowDays * 86_400_000;
      // Each bucket looks back from its own end: the first one's window starts before the range.
      const firstBucketMs = range.buckets[0]!.toMillis();
      // Each (actor, unit) pair counts in every bucket whose window (end − N days, end] holds it.
      const unit = range.interval === 'day' ? 'toStartOfDay' : range.interval === 'hour' ? 'toStartOfHour' : 'toStartOfMinute';
      const ends = range.buckets.map((b, i) => (range.buckets[i + 1] ?? b.plus({ [`${range.interval}s`]: 1 })).toMillis() / 1000);
      const keys = this.params.add(
        range.buckets.map((b) => formatBucketDay(b, range.interval)),
        'Array(String)',
      );
      const endsParam = this.params.add(ends, 'Array(Int64)');
      const windowSeconds = windowDays * 86_400;
      inner = `SELECT ${bv ? `${bv} AS bv, ` : ''}${this.actorSql()} AS actor, toInt64(toUnixTimestamp(${unit}(e.timestamp, ${this.tz}))) AS unit_start
  ${'{FROM}'}
  WHERE ${this.whereSql(this.dateTime(firstBucketMs - windowMs), this.dateTime(toMs), { withFilters: true })}
  GROUP BY ${bv ? 'bv, ' : ''}actor, unit_start`;
      const sql = `SELECT ${keys}[i] AS b, ${bv ? 'bv, ' : ''}uniqExact(actor) AS v
FROM (${inner})
ARRAY JOIN arrayFilter(k -> unit_start < ${endsParam}[k] AND unit_start >= ${endsParam}[k] - ${windowSeconds}, arrayEnumerate(${endsParam})) AS i
GROUP BY b${bv ? ', bv' : ''}`;
      return this.finish(sql, bv, firstBucketMs - windowMs, toMs);
    }

    const sql = `SELECT ${totalValue ? '' : `${bucket} AS b, `}${bv ? `${bv} AS bv, ` : ''}${this.directAggregate()} AS v
  ${'{FROM}'}
  WHERE ${this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true })}${groupKeys.length ? `\n  GROUP BY ${select(groupKeys)}` : ''}`;
    return this.finish(sql, bv, fromMs, toMs);
  }

  /**
   * The condition an event's breakdown values meet for the actors of one breakdown value, one
   * match per value breakdown (cohorts aside): its raw value (empties as the null sentinel); for a
   * histogram breakdown a bin `[lo,hi]` (lo <= value < hi), the null sentinel (no number) or
   * every event (PostHog's `["",""]`).
   */
  breakdownMatchSql(matches: BreakdownMatch[]): string {
    const breakdowns = this.input.breakdowns.filter((b) => b.type !== 'cohort');
    const nullSentinel = this.params.add(BREAKDOWN_NULL, 'String');
    const parts = matches.map((match, i) => {
      const raw = this.breakdownValueSql({ ...breakdowns[i]!, histogram_bin_count: null }, i);
      const number = `toFloat64OrNull(${raw})`;
      if (match.kind === 'any') return '1';
      if (match.kind === 'no_number') return `isNull(${number})`;
      if (match.kind === 'range') return `(${number} >= ${this.params.add(match.from, 'Float64')} AND ${number} < ${this.params.add(match.to, 'Float64')})`;
      return `if(empty(${raw}), ${nullSentinel}, ${raw}) = ${this.params.add(match.value, 'String')}`;
    });
    return parts.filter((p) => p !== '1').join(' AND ') || '1';
  }

  /** The condition of PostHog's "other" value: the breakdown value (binned as the trend bins it) is none of those the trend kept. */
  otherMatchSql(kept: string[][]): string {
    const bv = this.rawBreakdownArraySql();
    if (!bv) return '1';
    return this.input.breakdowns.filter((b) => b.type !== 'cohort').length === 1
      ? `NOT has(${this.params.add(
          kept.map((k) => k[0] ?? ''),
          'Array(String)',
        )}, ${bv})`
      : `NOT has(${this.params.add(kept, 'Array(Array(String))')}, ${bv})`;
  }

  /**
   * The actors behind one point of the series (PostHog's InsightActorsQuery over a TrendsQuery):
   * each actor with a matching event in [fromMs, toMs] that meets `breakdownCondition`, with how
   * many such events it has, ordered by actor id; `limit` + 1 rows tell whether more follow. A
   * first-time math lists the actors whose first event (of the series, or the first matching the
   * filters) falls in the window and meets the condition, each with that one event.
   */
  actorsSql(window: { fromMs: number; toMs: number }, breakdownCondition: string, page: { limit: number; offset: number }): SeriesQuery {
    const math = this.input.series.math;
    const paging = `ORDER BY actor_id
  LIMIT ${this.params.add(page.limit + 1, 'UInt32')} OFFSET ${this.params.add(page.offset, 'UInt64')}`;
    let sql: string;
    if (math === 'first_time_for_user' || math === 'first_matching_event_for_user') {
      const matching = math === 'first_matching_event_for_user';
      const matches = matching ? '1' : this.filtersSql();
      sql = `SELECT toString(actor) AS actor_id, 1 AS event_count FROM (
  SELECT ${this.actorSql()} AS actor, min(e.timestamp) AS first_ts, argMin(${matches}, e.timestamp) AS first_matches,
    argMin(${breakdownCondition}, e.timestamp) AS first_in_value
  {FROM}
  WHERE ${this.whereSql(null, this.dateTime(window.toMs), { withFilters: matching })}
  GROUP BY actor
  HAVING first_ts >= ${this.dateTime(window.fromMs)} AND first_matches AND first_in_value)
  ${paging}`;
    } else {
      const conditions = [this.whereSql(this.dateTime(window.fromMs), this.dateTime(window.toMs), { withFilters: true }), this.actorPresentSql()];
      if (breakdownCondition !== '1') conditions.push(breakdownCondition);
      sql = `SELECT toString(${this.actorSql()}) AS actor_id, count() AS event_count
  {FROM}
  WHERE ${conditions.join('\n  AND ')}
  GROUP BY actor_id
  ${paging}`;
    }
    return { sql: sql.split('{FROM}').join(this.fromSql(sql, window)), params: this.params.values, timeSeries: false };
  }

  /**
   * The smallest and largest numeric value of each histogram breakdown among the series' events
   * in the range (`min<i>`, `max<i>`; NULL when none is numeric), which its bins divide evenly.
   */
  histogramRange(): SeriesQuery {
    const selects = this.input.breakdowns.map((b, i) => {
      if (!b.histogram_bin_count) return `NULL AS min${i}, NULL AS max${i}`;
      const number = `toFloat64OrNull(${this.breakdownValueSql({ ...b, histogram_bin_count: null }, -1)})`;
      return `min(${number}) AS min${i}, max(${number}) AS max${i}`;
    });
    const fromMs = this.input.range.eventsFrom.toMillis();
    const toMs = this.input.range.to.toMillis();
    const where = this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true });
    const sql = `SELECT ${selects.join(', ')}
  ${this.fromSql(selects.join(' ') + where, { fromMs, toMs })}
  WHERE ${where}`;
    return { sql, params: this.params.values, timeSeries: false };
  }

  /**
   * Puts in the FROM clause and, with a breakdown, ranks the values as PostHog's trends query
   * builder does (trends_query_builder.py): over a time series by the sum of their bucket values,
   * real values before the null sentinel, then by the value; a total by its value. The first
   * `breakdown_limit` keep their value; the rest are summed, bucket by bucket, into "other".
   */
  private finish(sql: string, bv: string | null, fromMs: number, toMs: number): SeriesQuery {
    const text = sql.split('{FROM}').join(this.fromSql(sql, { fromMs, toMs }));
    if (!bv) return { sql: text, params: this.params.values, timeSeries: !this.input.totalValue };
    const limit = this.params.add(this.input.breakdownLimit, 'UInt32');
    const other = this.otherValueSql('bv');
    if (this.input.totalValue) {
      const ranked = `SELECT bv, v, row_number() OVER (ORDER BY v DESC, bv ASC) AS ranked FROM (${text})`;
      return {
        sql: `SELECT if(ranked <= ${limit}, bv, ${other}) AS bv, sum(v) AS v FROM (${ranked}) GROUP BY bv`,
        params: this.params.values,
        timeSeries: false,
      };
    }
    const nullValue = this.params.add(BREAKDOWN_NULL, 'String');
    const otherValue = this.params.add(BREAKDOWN_OTHER, 'String');
    const ordering =
      this.input.breakdowns.length > 1
        ? `if(has(bv, ${otherValue}), 2, if(has(bv, ${nullValue}), 1, 0))`
        : `multiIf(bv = ${otherValue}, 2, bv = ${nullValue}, 1, 0)`;
    const totals = `SELECT b, bv, v, sum(v) OVER (PARTITION BY bv) AS total FROM (${text})`;
    const ranked = `SELECT b, bv, v, dense_rank() OVER (ORDER BY ${ordering} ASC, total DESC, bv ASC) AS ranked FROM (${totals})`;
    return {
      sql: `SELECT b, if(ranked <= ${limit}, bv, ${other}) AS bv, sum(v) AS v FROM (${ranked}) GROUP BY b, bv`,
      params: this.params.values,
      timeSeries: true,
    };
  }
}
