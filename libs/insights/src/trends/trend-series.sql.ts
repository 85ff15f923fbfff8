import { EVENTS_TABLE } from '@sightline/clickhouse';
import {
  compilePropertyGroup,
  propertyRawSql,
  propertyTextSql,
  QueryParams,
  type CompileContext,
  type PropertyFilter,
  type PropertyGroup,
} from '@sightline/properties';
import { elementFilterSql } from '../actions/elements-chain.sql';
import { formatBucketDay, type QueryDateRange } from '../common/date-range';
import { COUNT_PER_ACTOR_MATHS, PROPERTY_MATHS, type BreakdownInput, type TrendSeriesInput } from './trend-filter';

/** PostHog's breakdown sentinels (posthog/hogql_queries/insights/trends/breakdown.py). */
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$';
export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$';

export class TrendQueryError extends Error {
  constructor(
    readonly attr: string | null,
    message: string,
    readonly code = 'invalid_input',
  ) {
    super(message);
  }
}

/**
 * What a series query needs from outside the trend library: the project, and compilers for the
 * things other modules own (actions, cohorts, HogQL). Each is a port so the SQL stays testable.
 */
export interface TrendSqlPorts {
  teamId: number;
  nowMs: number;
  /** SQL boolean over the events row `e` for "this event matches action `id`". */
  actionMatch(actionId: number, ctx: CompileContext): string;
  /** SQL boolean for "the person `personIdSql` is in cohort `id`". */
  cohortMembership(cohortId: number, personIdSql: string, params: QueryParams): string;
  /** A HogQL expression over the events row as SQL (aggregations allowed when asked). */
  hogql(expression: string, params: QueryParams, options: { allowAggregations: boolean }): string;
}

/** A distinct id's current person: merges re-point distinct ids, so events written before a merge count for the merged person. */
const PERSON_ID = 'if(empty(pdi.distinct_id), e.person_id, pdi.person_id)';
const SESSION_ID = "JSONExtractString(e.properties, '$session_id')";

/** Properties a session filter or breakdown can name, computed from the session's events. */
const SESSION_PROPERTIES_SQL = `concat('{"$session_duration":', toString(dateDiff('second', min(timestamp), max(timestamp))),
  ',"$start_timestamp":', toJSONString(toString(min(timestamp))),
  ',"$end_timestamp":', toJSONString(toString(max(timestamp))),
  ',"$entry_current_url":', toJSONString(argMin(JSONExtractString(properties, '$current_url'), timestamp)),
  ',"$entry_pathname":', toJSONString(argMin(JSONExtractString(properties, '$pathname'), timestamp)),
  ',"$end_current_url":', toJSONString(argMax(JSONExtractString(properties, '$current_url'), timestamp)),
  ',"$end_pathname":', toJSONString(argMax(JSONExtractString(properties, '$pathname'), timestamp)),
  ',"$pageview_count":', toString(countIf(event = '$pageview')),
  ',"$autocapture_count":', toString(countIf(event = '$autocapture')),
  ',"$is_bounce":', if(countIf(event = '$pageview') <= 1 AND dateDiff('second', min(timestamp), max(timestamp)) < 10, 'true', 'false'), '}')`;

/** Sessions last at most a day (PostHog's cap); their events are read this far around the range. */
const SESSION_MARGIN_SECONDS = 86_400;

export interface SeriesQuery {
  sql: string;
  params: Record<string, unknown>;
  /** Rows carry a bucket key `b` (time series) or not (total value). */
  timeSeries: boolean;
}

export interface SeriesQueryInput {
  series: TrendSeriesInput;
  /** Query-wide filters (with test-account filters when asked), ANDed with the series'. */
  properties: PropertyGroup;
  range: QueryDateRange;
  breakdowns: BreakdownInput[];
  /** A cohort breakdown's cohort for this query (null: all users / no cohort breakdown). */
  cohortId: number | null;
  breakdownLimit: number;
  /** Histogram edges per breakdown (when histogram_bin_count is set), computed by a first query. */
  histogramEdges?: (number[] | null)[];
  aggregationGroupTypeIndex: number | null;
  totalValue: boolean;
}

/** Numeric levels of quantile maths and count-per-actor maths. */
const QUANTILE_LEVEL: Record<string, number> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 };

const isPropertyMath = (math: string) => (PROPERTY_MATHS as readonly string[]).includes(math);
const isCountPerActor = (math: string) => (COUNT_PER_ACTOR_MATHS as readonly string[]).includes(math);

/** An aggregate over values `x`: sum/avg/min/max/median/pNN. */
function numericAggregate(kind: string, x: string): string {
  if (kind in QUANTILE_LEVEL) return `quantile(${QUANTILE_LEVEL[kind]})(${x})`;
  return `${kind}(${x})`;
}

/** Builds the SQL for one series of a trend (one period, one cohort of a cohort breakdown). */
export class SeriesSqlBuilder {
  readonly params = new QueryParams();
  private readonly team: string;
  private readonly tz: string;

  constructor(
    private readonly input: SeriesQueryInput,
    private readonly ports: TrendSqlPorts,
  ) {
    this.team = this.params.add(ports.teamId, 'Int64');
    this.tz = this.params.add(input.range.timezone, 'String');
  }

  private compileContext(): CompileContext {
    return {
      params: this.params,
      nowMs: this.ports.nowMs,
      propertiesColumn: (filter: PropertyFilter) => {
        switch (filter.type ?? 'event') {
          case 'event':
            return 'e.properties';
          case 'person':
            return 'e.person_properties';
          case 'group':
            return `e.group${Number(filter.group_type_index)}_properties`;
          case 'session':
            return 's.session_properties';
          default:
            return null;
        }
      },
      cohortMembership: (cohortId: number) => this.ports.cohortMembership(cohortId, PERSON_ID, this.params),
      elementFilter: (filter: PropertyFilter) => elementFilterSql(filter, 'e.elements_chain', this.params),
      hogqlFilter: (expression: string) => this.ports.hogql(expression, this.params, { allowAggregations: false }),
    };
  }

  /**
   * The bucket a timestamp falls in (project timezone), typed so ClickHouse groups by a number
   * and writes it as `days[i]` does: a Date (`YYYY-MM-DD`) for day, week and month, a DateTime
   * (`YYYY-MM-DD HH:MM:SS`) for hour and minute.
   */
  private bucketSql(timestamp: string): string {
    const { interval, weekStartDay } = this.input.range;
    const tz = this.tz;
    switch (interval) {
      case 'minute':
        return `toStartOfMinute(${timestamp}, ${tz})`;
      case 'hour':
        return `toStartOfHour(${timestamp}, ${tz})`;
      case 'day':
        return `toDate(${timestamp}, ${tz})`;
      case 'week':
        // Mode 0: weeks start on Sunday; mode 1: on Monday (the project's week_start_day).
        return `toStartOfWeek(${timestamp}, ${weekStartDay === 1 ? 1 : 0}, ${tz})`;
      case 'month':
        return `toStartOfMonth(${timestamp}, ${tz})`;
    }
  }

  private actorSql(): string {
    const index = this.input.aggregationGroupTypeIndex;
    return index === null ? PERSON_ID : `JSONExtractString(e.properties, ${this.params.add(`$group_${index}`, 'String')})`;
  }

  /** A breakdown's raw value as text ('' when missing), before ranking. */
  private breakdownValueSql(breakdown: BreakdownInput, index: number): string {
    const key = () => this.params.add(String(breakdown.property), 'String');
    let value: string;
    switch (breakdown.type) {
      case 'event':
        value = this.jsonValue('e.properties', key());
        break;
      case 'person':
        value = this.jsonValue('e.person_properties', key());
        break;
      case 'group':
        value = this.jsonValue(`e.group${Number(breakdown.group_type_index)}_properties`, key());
        break;
      case 'session':
        value = this.jsonValue('s.session_properties', key());
        break;
      case 'hogql':
        value = `ifNull(toString(${this.ports.hogql(String(breakdown.property), this.params, { allowAggregations: false })}), '')`;
        break;
      case 'event_metadata': {
        const columns: Record<string, string> = {
          event: 'e.event',
          distinct_id: 'e.distinct_id',
          person_id: `toString(${PERSON_ID})`,
          timestamp: `toString(e.timestamp)`,
        };
        const column = columns[String(breakdown.property)];
        if (!column)
          throw new TrendQueryError(
            'breakdown',
            `Unknown event_metadata breakdown "${String(breakdown.property).slice(0, 100)}" (one of: ${Object.keys(columns).join(', ')}).`,
            'invalid_choice',
          );
        value = column;
        break;
      }
      default:
        throw new TrendQueryError('breakdown_type', `Breakdown type "${breakdown.type}" cannot be combined this way.`, 'invalid_choice');
    }
    if (breakdown.normalize_url) {
      // PostHog's breakdown_normalize_url: drop the query string, the fragment and a trailing slash.
      value = `if(empty(${value}), '', if(empty(replaceRegexpOne(replaceRegexpOne(${value}, '[?#].*$', ''), '/+$', '')), '/', replaceRegexpOne(replaceRegexpOne(${value}, '[?#].*$', ''), '/+$', '')))`;
    }
    const edges = this.input.histogramEdges?.[index];
    if (edges && edges.length > 1) {
      const bound = this.params.add(edges, 'Array(Float64)');
      const number = `toFloat64OrNull(${value})`;
      // The bin whose upper edge is the first at or above the value; the last bin is closed.
      const bin = `greatest(1, least(length(${bound}) - 1, arrayFirstIndex(x -> x >= ${number}, ${bound}) - 1))`;
      value = `if(isNull(${number}), '', concat('[', toString(${bound}[${bin}]), ',', toString(${bound}[${bin} + 1]), ']'))`;
    }
    return value;
  }

  /** The property as text, '' when missing or a JSON null. */
  private jsonValue(column: string, key: string): string {
    const text = `JSONExtractString(${column}, ${key})`;
    const raw = propertyRawSql(column, key);
    // Most values are strings: one parse. Others (and "") are read raw, only for those rows.
    return `multiIf(${text} != '', ${text}, ${raw} IN ('', 'null') OR startsWith(${raw}, '"'), '', ${raw})`;
  }

  /** The "other" sentinel in the breakdown value's shape (one text, or one per breakdown). */
  private otherValueSql(raw: string): string {
    const other = this.params.add(BREAKDOWN_OTHER, 'String');
    return this.input.breakdowns.length > 1 ? `arrayResize([${other}], length(${raw}), ${other})` : other;
  }

  /**
   * The breakdown value array, empties as the null sentinel, values outside the top
   * `breakdown_limit` (the `top_values` the query's WITH ranks) as the "other" sentinel.
   */
  private breakdownArraySql(): string | null {
    const raw = this.rawBreakdownArraySql();
    if (!raw) return null;
    return `if(has(top_values, ${raw}), ${raw}, ${this.otherValueSql(raw)})`;
  }

  private rawBreakdown: string | null | undefined;
  /**
   * The breakdown value with empties as the null sentinel: a text for one breakdown (a cheaper
   * grouping key), an array for several.
   */
  private rawBreakdownArraySql(): string | null {
    if (this.rawBreakdown !== undefined) return this.rawBreakdown;
    const breakdowns = this.input.breakdowns.filter((b) => b.type !== 'cohort');
    if (breakdowns.length === 0) return (this.rawBreakdown = null);
    const nullSentinel = this.params.add(BREAKDOWN_NULL, 'String');
    const items = breakdowns.map((b, i) => {
      const raw = this.breakdownValueSql(b, i);
      return `if(empty(${raw}), ${nullSentinel}, ${raw})`;
    });
    return (this.rawBreakdown = items.length === 1 ? items[0]! : `[${items.join(', ')}]`);
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
    // Aggregating by a group counts only events that belong to one of that type.
    if (this.input.aggregationGroupTypeIndex !== null) parts.push(`${this.actorSql()} != ''`);
    if (this.input.cohortId !== null) parts.push(this.ports.cohortMembership(this.input.cohortId, PERSON_ID, this.params));
    return parts.filter((p) => p !== '1').join('\n  AND ');
  }

  private filtersSql(): string {
    return compilePropertyGroup({ type: 'AND', values: [this.input.properties, this.input.series.properties] }, this.compileContext());
  }

  /** An instant as a bound DateTime64; an end of period (…:59.999) reaches to …:59.999999. */
  private dateTime(ms: number): string {
    const text = new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
    return this.params.add(ms % 1000 === 999 || ms % 1000 === -1 ? `${text}999` : text, "DateTime64(6, 'UTC')");
  }

  /** FROM with the joins the rest of the SQL uses (decided from the SQL text itself). */
  private fromSql(sqlUsingSources: string, sessionWindow: { fromMs: number; toMs: number }): string {
    const joins: string[] = [];
    if (sqlUsingSources.includes('pdi.')) {
      joins.push(`LEFT JOIN (
    SELECT distinct_id, argMax(person_id, version) AS person_id
    FROM person_distinct_id2 WHERE team_id = ${this.team}
    GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0
  ) AS pdi ON pdi.distinct_id = e.distinct_id`);
    }
    if (sqlUsingSources.includes('s.session_properties')) {
      joins.push(`LEFT JOIN (
    SELECT JSONExtractString(properties, '$session_id') AS session_id, ${SESSION_PROPERTIES_SQL} AS session_properties
    FROM ${EVENTS_TABLE}
    WHERE team_id = ${this.team} AND timestamp >= ${this.dateTime(sessionWindow.fromMs - SESSION_MARGIN_SECONDS * 1000)}
      AND timestamp <= ${this.dateTime(sessionWindow.toMs + SESSION_MARGIN_SECONDS * 1000)} AND session_id != ''
    GROUP BY session_id
  ) AS s ON s.session_id = ${SESSION_ID}`);
    }
    // FINAL: a redelivered event (same uuid) must never be counted twice.
    return [`FROM ${EVENTS_TABLE} AS e FINAL`, ...joins].join('\n  ');
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
        const g = `JSONExtractString(e.properties, ${this.params.add(`$group_${s.math_group_type_index}`, 'String')})`;
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
        throw new TrendQueryError(null, `math "${s.math}" cannot be computed directly.`);
      }
    }
  }

  /**
   * The direct aggregate split into a partial state and its merge (ClickHouse's -State and
   * -Merge combinators), so a breakdown can aggregate once per (bucket, value) and still merge
   * the values outside the top ones into "other" exactly; null for HogQL maths.
   */
  private mergeableAggregate(): { state: string; merge: (state: string) => string } | null {
    const s = this.input.series;
    switch (s.math) {
      case 'total':
        return { state: 'countState()', merge: (x) => `countMerge(${x})` };
      case 'dau':
      case 'weekly_active':
      case 'monthly_active':
        return { state: `uniqExactState(${this.actorSql()})`, merge: (x) => `uniqExactMerge(${x})` };
      case 'unique_session':
        return { state: `uniqExactIfState(${SESSION_ID}, ${SESSION_ID} != '')`, merge: (x) => `uniqExactIfMerge(${x})` };
      case 'unique_group': {
        const g = `JSONExtractString(e.properties, ${this.params.add(`$group_${s.math_group_type_index}`, 'String')})`;
        return { state: `uniqExactIfState(${g}, ${g} != '')`, merge: (x) => `uniqExactIfMerge(${x})` };
      }
      case 'hogql':
        return null;
      default: {
        if (!isPropertyMath(s.math)) return null;
        const column = s.math_property_type === 'person_properties' ? 'e.person_properties' : 'e.properties';
        const number = `toFloat64OrNull(${propertyTextSql(column, this.params.add(s.math_property!, 'String'))})`;
        if (s.math in QUANTILE_LEVEL) {
          const level = QUANTILE_LEVEL[s.math];
          return { state: `quantileState(${level})(${number})`, merge: (x) => `ifNull(quantileMerge(${level})(${x}), 0)` };
        }
        return { state: `${s.math}State(${number})`, merge: (x) => `ifNull(${s.math}Merge(${x}), 0)` };
      }
    }
  }

  /**
   * A breakdown in one pass: partial aggregates per (bucket, value), values ranked by their event
   * count over the range, and those past `breakdown_limit` merged into the "other" sentinel.
   */
  private rankedBreakdownSql(aggregate: { state: string; merge: (state: string) => string }, fromMs: number, toMs: number): SeriesQuery {
    const totalValue = this.input.totalValue;
    const raw = this.rawBreakdownArraySql()!;
    const b = totalValue ? '' : 'b, ';
    const limit = this.params.add(this.input.breakdownLimit, 'UInt32');
    const inner = `SELECT ${totalValue ? '' : `${this.bucketSql('e.timestamp')} AS b, `}${raw} AS raw, ${aggregate.state} AS s, count() AS c
  {FROM}
  WHERE ${this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true })}
  GROUP BY ${b}raw`;
    const sql = `SELECT ${b}bv, ${aggregate.merge('s')} AS v, min(value_rank) AS value_rank FROM (
  SELECT ${b}if(ranked <= ${limit}, raw, ${this.otherValueSql('raw')}) AS bv, if(ranked <= ${limit}, ranked, 0) AS value_rank, s FROM (
    SELECT ${b}raw, s, dense_rank() OVER (ORDER BY total DESC, raw ASC) AS ranked FROM (
      SELECT ${b}raw, s, sum(c) OVER (PARTITION BY raw) AS total FROM (${inner}))))
GROUP BY ${b}bv`;
    return { sql: sql.split('{FROM}').join(this.fromSql(sql, { fromMs, toMs })), params: this.params.values, timeSeries: !totalValue };
  }

  build(): SeriesQuery {
    const { range, totalValue } = this.input;
    const math = this.input.series.math;
    const bv = this.breakdownArraySql();
    const fromMs = range.buckets[0]!.toMillis();
    const toMs = range.to.toMillis();
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
  WHERE ${this.whereSql(this.dateTime(fromMs - windowMs), this.dateTime(toMs), { withFilters: true })}
  GROUP BY ${bv ? 'bv, ' : ''}actor, unit_start`;
      const sql = `SELECT ${keys}[i] AS b, ${bv ? 'bv, ' : ''}uniqExact(actor) AS v
FROM (${inner})
ARRAY JOIN arrayFilter(k -> unit_start < ${endsParam}[k] AND unit_start >= ${endsParam}[k] - ${windowSeconds}, arrayEnumerate(${endsParam})) AS i
GROUP BY b${bv ? ', bv' : ''}`;
      return this.finish(sql, bv, fromMs - windowMs, toMs);
    }

    const mergeable = bv ? this.mergeableAggregate() : null;
    if (mergeable) return this.rankedBreakdownSql(mergeable, fromMs, toMs);
    const sql = `SELECT ${totalValue ? '' : `${bucket} AS b, `}${bv ? `${bv} AS bv, ` : ''}${this.directAggregate()} AS v
  ${'{FROM}'}
  WHERE ${this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true })}${groupKeys.length ? `\n  GROUP BY ${select(groupKeys)}` : ''}`;
    return this.finish(sql, bv, fromMs, toMs);
  }

  /**
   * The bin edges of each histogram breakdown over the range: quantiles at 0, 1/n, …, 1 of the
   * numeric values (PostHog bins by quantiles, so each bin holds about as many events).
   */
  histogramEdges(): SeriesQuery {
    const selects = this.input.breakdowns.map((b, i) => {
      if (!b.histogram_bin_count) return `[] AS edges${i}`;
      const n = b.histogram_bin_count;
      const levels = Array.from({ length: n + 1 }, (_, k) => k / n);
      return `quantiles(${levels.join(', ')})(toFloat64OrNull(${this.breakdownValueSql({ ...b, histogram_bin_count: null }, -1)})) AS edges${i}`;
    });
    const fromMs = this.input.range.buckets[0]!.toMillis();
    const toMs = this.input.range.to.toMillis();
    const where = this.whereSql(this.dateTime(fromMs), this.dateTime(toMs), { withFilters: true });
    const sql = `SELECT ${selects.join(', ')}
  ${this.fromSql(selects.join(' ') + where, { fromMs, toMs })}
  WHERE ${where}`;
    return { sql, params: this.params.values, timeSeries: false };
  }

  /**
   * Puts in the FROM clause and, with a breakdown, ranks the values by their event count over the
   * range: the top `breakdown_limit` keep their value, the rest become the "other" sentinel.
   */
  private finish(sql: string, bv: string | null, fromMs: number, toMs: number): SeriesQuery {
    let text = sql.split('{FROM}').join(this.fromSql(sql, { fromMs, toMs }));
    if (bv) {
      const raw = this.rawBreakdownArraySql()!;
      const rangeFrom = this.dateTime(this.input.range.buckets[0]!.toMillis());
      const rangeTo = this.dateTime(this.input.range.to.toMillis());
      const where = this.whereSql(rangeFrom, rangeTo, { withFilters: true });
      const top = `(SELECT groupArray(bv) FROM (SELECT ${raw} AS bv, count() AS rank_count
    ${this.fromSql(raw + where, { fromMs, toMs })}
    WHERE ${where}
    GROUP BY bv ORDER BY rank_count DESC, bv ASC LIMIT ${this.params.add(this.input.breakdownLimit, 'UInt32')}))`;
      text = `WITH ${top} AS top_values
SELECT *, indexOf(top_values, bv) AS value_rank FROM (${text})`;
    }
    return { sql: text, params: this.params.values, timeSeries: !this.input.totalValue };
  }
}
