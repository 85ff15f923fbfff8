import type { ClickHouseClient } from '@clickhouse/client';
import type { PropertyGroup } from '@sightline/properties';
import {
  formatBucketDay,
  formatBucketLabel,
  isoDateTime,
  parseCompareTo,
  previousPeriod,
  resolveQueryDateRange,
  shiftDateRange,
  type QueryDateRange,
} from '../common/date-range';
import { TOTAL_VALUE_DISPLAYS, type ParsedTrendFilter } from './trend-filter';
import { parseFormula } from './trend-formula';
import { applyFormula, breakdownOrder } from './trend-order';
import { BREAKDOWN_OTHER, histogramBins, QueryInputError, type HistogramBins } from '../common/events-sql';
import { SeriesSqlBuilder } from './trend-series.sql';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { jsonRows } from '../common/json-rows';
import { nextWorkTurn } from '@sightline/http';
import { type SeriesInput } from '../common/series';
import { type QuerySqlPorts } from '../common/query-ports';

export interface TrendSeries {
  data: number[] | null;
  labels?: string[];
  days: string[];
  count: number;
  aggregated_value?: number;
  label: string;
  filter: Record<string, unknown>;
  action: Record<string, unknown> | null;
  breakdown_value?: string | number | (string | number)[];
  compare?: boolean;
  compare_label?: 'current' | 'previous';
}

export interface TrendResult {
  result: TrendSeries[];
  next: null;
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
}

interface Row {
  b?: string;
  /** One breakdown: its value; several: one value each. */
  bv?: string | string[];
  v: number | string | null;
}

/**
 * The most points (values in `data`, summed over every series of the answer, both periods when
 * comparing) one trend may hold, counting every breakdown value it may find: about 14 MB of
 * JSON. Checked before any query runs (docs/http-api.md#limits).
 */
export const MAX_TREND_POINTS = 200_000;

/**
 * Refuses a trend whose answer could hold more than MAX_TREND_POINTS: series × periods ×
 * breakdown values (at most breakdown_limit, plus "other" and "none") × buckets.
 */
function checkTrendPoints(filter: ParsedTrendFilter, periods: number, valuesPerSeries: number, buckets: number, interval: string): void {
  const points = filter.series.length * periods * valuesPerSeries * buckets;
  if (points <= MAX_TREND_POINTS) return;
  const parts = [
    `${filter.series.length} series`,
    ...(periods > 1 ? [`${periods} periods`] : []),
    ...(valuesPerSeries > 1 ? [`up to ${valuesPerSeries} breakdown values`] : []),
    `${buckets} ${interval} buckets`,
  ];
  throw new QueryInputError(
    valuesPerSeries > 1 ? 'breakdown_limit' : 'interval',
    `This trend could hold ${points} points (${parts.join(' × ')}); at most ${MAX_TREND_POINTS} are allowed. ` +
      'Narrow the date range, use a longer interval, or lower breakdown_limit.',
    'max_points',
  );
}

/** One query's rows turned into one result per breakdown value. */
interface SeriesValues {
  breakdown: string[] | null;
  data: number[];
  total: number;
}

const toNumber = (v: unknown) => {
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
};

async function runRows(ch: ClickHouseClient, sql: string, params: Record<string, unknown>): Promise<Row[]> {
  return jsonRows<Row>(await ch.query({ query: sql, query_params: params, format: 'JSONEachRow' }));
}

function collect(rows: Row[], range: QueryDateRange, totalValue: boolean, withBreakdown: boolean): SeriesValues[] {
  const index = new Map(range.buckets.map((b, i) => [formatBucketDay(b, range.interval), i]));
  const byValue = new Map<string, SeriesValues>();
  for (const row of rows) {
    const key = withBreakdown ? JSON.stringify(row.bv) : '';
    let values = byValue.get(key);
    if (!values) {
      values = { breakdown: withBreakdown ? [row.bv!].flat() : null, data: range.buckets.map(() => 0), total: 0 };
      byValue.set(key, values);
    }
    if (totalValue) values.total += toNumber(row.v);
    else {
      const i = index.get(row.b!);
      if (i !== undefined) values.data[i] = toNumber(row.v);
    }
  }
  if (!withBreakdown && byValue.size === 0) byValue.set('', { breakdown: null, data: range.buckets.map(() => 0), total: 0 });
  return [...byValue.values()];
}

/** PostHog's smoothing: each point the floor of the mean of it and the n−1 before it. */
function smooth(data: number[], intervals: number): number[] {
  if (intervals <= 1) return data;
  return data.map((_, i) => {
    const window = data.slice(Math.max(0, i - intervals + 1), i + 1);
    return Math.floor(window.reduce((a, b) => a + b, 0) / window.length);
  });
}

const cumulative = (data: number[]) => {
  let sum = 0;
  return data.map((v) => (sum += v));
};

/**
 * Runs a checked trend filter for one project: one query per series (and per period when
 * comparing, per cohort for a cohort breakdown), shaped as PostHog's legacy trend answer.
 */
export async function runTrendQuery(
  ch: ClickHouseClient,
  project: QueryProject,
  filter: ParsedTrendFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<TrendResult> {
  const totalValue = TOTAL_VALUE_DISPLAYS.has(filter.display);
  const interval = totalValue ? 'day' : filter.interval;
  const earliest = filter.date_from === 'all' ? await ports.earliestEventMs() : null;
  const cohortBreakdown = filter.breakdowns.length > 0 && filter.breakdowns[0]!.type === 'cohort';
  const cohorts: (number | 'all' | null)[] = cohortBreakdown ? filter.breakdowns.map((b) => (b.property === 'all' ? 'all' : Number(b.property))) : [null];
  const valueBreakdowns = cohortBreakdown ? [] : filter.breakdowns;
  let formula: ReturnType<typeof parseFormula> | null = null;
  let compareTo: ReturnType<typeof parseCompareTo> | null = null;
  // Building the buckets and their texts is the longest stretch of work here: on its own turn.
  await nextWorkTurn();
  const range = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    interval,
    timezone: project.timezone,
    weekStartDay: project.weekStartDay,
    nowMs,
    explicitDate: filter.explicit_date,
    earliestEventMs: earliest,
    // The formula and compare_to are read first, so a query with several faults is refused for
    // the same one whether or not its buckets are counted before they are built.
    checkBuckets: (buckets) => {
      formula = filter.formula ? parseFormula(filter.formula, filter.series.length) : null;
      compareTo = filter.compare && filter.compare_to ? parseCompareTo(filter.compare_to) : null;
      checkTrendPoints(
        filter,
        filter.compare ? 2 : 1,
        cohortBreakdown ? cohorts.length : valueBreakdowns.length > 0 ? filter.breakdown_limit + 2 : 1,
        totalValue ? 1 : buckets,
        interval,
      );
    },
  });
  const periods: { range: QueryDateRange; label: 'current' | 'previous' | null }[] = [{ range, label: filter.compare ? 'current' : null }];
  if (filter.compare) periods.push({ range: compareTo ? shiftDateRange(range, compareTo) : previousPeriod(range), label: 'previous' });

  const properties: PropertyGroup = {
    type: 'AND',
    values: filter.filter_test_accounts ? [filter.properties, project.testAccountFilters] : [filter.properties],
  };
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };

  const responseFilter = buildResponseFilter(filter, range);
  const cumulativeDisplay = filter.display === 'ActionsLineGraphCumulative';
  // PostHog runs one query per cohort unless several cohorts without "all" are asked for: then
  // one query per series holds them all (its inCohortVia LEFTJOIN_CONJOINED), and they come
  // ordered by count (trends_query_runner.py update_hogql_modifiers, setup_series).
  const conjoinedCohorts = cohortBreakdown && cohorts.length > 1 && !cohorts.includes('all');
  type Shaped = { series: SeriesInput; order: number; period: (typeof periods)[number]; cohort: number | 'all' | null; values: SeriesValues };
  const jobs = conjoinedCohorts
    ? periods.flatMap((period) => filter.series.flatMap((series, order) => cohorts.map((cohort) => ({ period, cohort, series, order }))))
    : periods.flatMap((period) => cohorts.flatMap((cohort) => filter.series.map((series, order) => ({ period, cohort, series, order }))));
  const shaped: Shaped[][] = await Promise.all(
    jobs.map(async ({ period, cohort, series, order }) => {
      const input = {
        series,
        properties,
        range: period.range,
        breakdowns: valueBreakdowns,
        cohortId: typeof cohort === 'number' ? cohort : null,
        breakdownLimit: filter.breakdown_limit,
        aggregationGroupTypeIndex: series.math_group_type_index ?? filter.aggregation_group_type_index,
        totalValue,
        cumulative: cumulativeDisplay,
      };
      let bins: (HistogramBins | null)[] | undefined;
      if (valueBreakdowns.some((b) => b.histogram_bin_count)) {
        const rangeQuery = new SeriesSqlBuilder(input, sqlPorts).histogramRange();
        const [row] = (await runRows(ch, rangeQuery.sql, rangeQuery.params)) as unknown as (Record<string, unknown> | undefined)[];
        bins = valueBreakdowns.map((b, i) =>
          b.histogram_bin_count ? histogramBins(numberOrNull(row?.[`min${i}`]), numberOrNull(row?.[`max${i}`]), b.histogram_bin_count) : null,
        );
      }
      const query = new SeriesSqlBuilder({ ...input, histogramBins: bins }, sqlPorts).build();
      const rows = await runRows(ch, query.sql, query.params);
      await nextWorkTurn();
      // A cohort's query is grouped by the cohort in PostHog: no events, no series
      // (test_combine_all_cohort_and_icontains), where a series without breakdown answers zeros.
      if (cohort !== null && rows.length === 0) return [];
      return collect(rows, period.range, totalValue, valueBreakdowns.length > 0).map((values) => ({ series, order, period, cohort, values }));
    }),
  );

  // PostHog prefixes a breakdown label with the series name when its query count (per period)
  // is above one: with one query per cohort, each cohort counts (test_breakdown_by_cohort).
  const queriesPerPeriod = conjoinedCohorts ? filter.series.length : cohorts.length * filter.series.length;
  const labelWithSeries = (cohortBreakdown ? queriesPerPeriod : filter.series.length) > 1;
  // The buckets' texts are the same for every series of a period: made once per period (a
  // breakdown can have hundreds of series), and the series share them.
  const bucketTexts = new Map<(typeof periods)[number], { days: string[]; labels: string[]; isoDays: string[] }>();
  const textsOf = (period: (typeof periods)[number]) => {
    let texts = bucketTexts.get(period);
    if (!texts) {
      const { buckets, interval } = period.range;
      // Both periods of a comparison are labelled with their own dates, as PostHog's
      // format_label_date does (test_trends_compare_day_interval_relative_range).
      texts = {
        days: buckets.map((b) => formatBucketDay(b, interval)),
        labels: buckets.map((b) => formatBucketLabel(b, period.range)),
        isoDays: buckets.map(isoDateTime),
      };
      bucketTexts.set(period, texts);
    }
    return texts;
  };
  const toResult = ({ series, order, period, cohort, values }: Shaped): TrendSeries => {
    const name = series.kind === 'actions' ? ports.actionName(Number(series.id)) : (series.id ?? 'All events');
    let label = String(series.custom_name ?? name);
    const texts = textsOf(period);
    const data = smooth(values.data, filter.smoothing_intervals);
    // A total has no dates: PostHog's answer selects none (test_breakdown_filtering_bar_chart_by_value).
    const result: TrendSeries = totalValue
      ? { data: [], days: [], count: 0, aggregated_value: values.total, label, filter: responseFilter, action: null }
      : {
          data: cumulativeDisplay ? cumulative(data) : data,
          labels: texts.labels,
          days: texts.days,
          count: 0,
          label,
          filter: responseFilter,
          action: null,
        };
    if (!totalValue) {
      const d = result.data!;
      result.count = cumulativeDisplay ? (d[d.length - 1] ?? 0) : d.reduce((a, b) => a + b, 0);
    }
    result.action = {
      days: texts.isoDays,
      id: series.id,
      type: series.kind,
      order,
      name: series.name ?? name,
      custom_name: series.custom_name,
      math: series.math,
      math_property: series.math_property,
      math_hogql: series.math_hogql,
      math_group_type_index: series.math_group_type_index,
      properties: {},
    };
    if (period.label) {
      result.compare = true;
      result.compare_label = period.label;
    }
    if (cohort !== null) {
      const cohortLabel = cohort === 'all' ? 'all users' : ports.cohortName(cohort);
      label = labelWithSeries ? `${label} - ${cohortLabel}` : cohortLabel;
      result.breakdown_value = cohort;
    } else if (values.breakdown) {
      const value = values.breakdown.length === 1 && !filter.breakdown_is_list ? values.breakdown[0]! : values.breakdown;
      const text = Array.isArray(value) ? value.join('::') : value;
      label = labelWithSeries ? `${label} - ${text}` : text;
      result.breakdown_value = value;
    }
    result.label = label;
    return result;
  };

  await nextWorkTurn();
  // Each query's values in PostHog's order; conjoined cohorts are one query per series.
  const perQuery: TrendSeries[][] = [];
  shaped.forEach((one, i) => {
    const results = one.map(toResult);
    const job = jobs[i]!;
    const previous = i > 0 ? jobs[i - 1]! : null;
    if (conjoinedCohorts && previous && previous.period === job.period && previous.order === job.order) perQuery[perQuery.length - 1]!.push(...results);
    else perQuery.push(results);
  });
  let results = perQuery.flatMap((one) => (one.length > 1 && (valueBreakdowns.length > 0 || conjoinedCohorts) ? one.sort(breakdownOrder) : one));
  if (filter.breakdown_hide_other_aggregation) results = results.filter((r) => ![r.breakdown_value].flat().every((v) => v === BREAKDOWN_OTHER));
  if (formula) results = applyFormula(results, filter, totalValue, formula);
  return { result: results, next: null, timezone: range.timezone, is_cached: false, last_refresh: new Date(nowMs).toISOString() };
}

const numberOrNull = (value: unknown) => (value === null || value === undefined || value === '' ? null : Number(value));

function buildResponseFilter(filter: ParsedTrendFilter, range: QueryDateRange): Record<string, unknown> {
  const request = filter.request;
  const out: Record<string, unknown> = {
    insight: 'TRENDS',
    events: request['events'] ?? [],
    actions: request['actions'] ?? [],
    properties: request['properties'] ?? [],
    filter_test_accounts: filter.filter_test_accounts,
    date_from: isoDateTime(range.from),
    date_to: isoDateTime(range.to),
    entity_type: 'events',
    interval: filter.interval,
    display: filter.display,
  };
  for (const key of [
    'breakdown',
    'breakdown_type',
    'breakdowns',
    'breakdown_limit',
    'breakdown_group_type_index',
    'breakdown_hide_other_aggregation',
    'breakdown_normalize_url',
    'breakdown_histogram_bin_count',
    'compare',
    'compare_to',
    'formula',
    'aggregation_group_type_index',
    'smoothing_intervals',
    'sampling_factor',
  ]) {
    if (request[key] !== undefined && request[key] !== null) out[key] = request[key];
  }
  return out;
}
