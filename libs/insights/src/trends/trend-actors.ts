import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import type { QuerySqlPorts } from '../common/query-ports';
import { isJsonObject } from '@sightline/json-input';
import type { PropertyGroup } from '@sightline/properties';
import type { Sql } from '@sightline/postgres';
import { formatBucketDay, previousPeriod, resolveQueryDateRange, shiftDateRange, parseCompareTo, type QueryDateRange } from '../common/date-range';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER, histogramBins, type BreakdownInput, type HistogramBins } from '../common/events-sql';
import { QueryFilterError } from '../common/query-filter-error';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { actorColumns, actorsOfPage, DEFAULT_FUNNEL_ACTORS_LIMIT, MAX_FUNNEL_ACTORS_LIMIT, type FunnelActorsResult } from '../funnels/funnel-actors';
import { TOTAL_VALUE_DISPLAYS, type ParsedTrendFilter } from './trend-filter';
import { SeriesSqlBuilder, type BreakdownMatch, type SeriesQueryInput } from './trend-series.sql';

/** The columns a trend's ActorsQuery serves: the actor's, and how many of the point's events it has. */
const TREND_ACTOR_COLUMNS = ['person', 'actor', 'id', 'key', 'person.$delete', 'created_at', 'event_count'] as const;
/** PostHog's histogram value for every bin at once (its "all" bin). */
const EVERY_BIN = '["",""]';
/** Active-user maths: an actor counts in a bucket when active in the N days that end with it. */
const ACTIVE_WINDOW_DAYS: Record<string, number> = { weekly_active: 7, monthly_active: 30 };

/** Which point of a trend, and which page of its actors (PostHog's InsightActorsQuery over a TrendsQuery). */
export interface TrendActorsRequest {
  /** The series, from 0. */
  series: number;
  /** The bucket (as the answer's `days` name it, or its day); null: the whole range (total-value displays). */
  day: string | null;
  /** A breakdown value (raw, one entry per breakdown); null: every value. */
  breakdown: string[] | null;
  compare: 'current' | 'previous' | null;
  select: string[] | null;
  limit: number;
  offset: number;
}

const fail = (attr: string, message: string, code = 'invalid'): never => {
  throw new QueryFilterError(attr, message, code);
};

function integer(node: Record<string, unknown>, key: string, attr: string, min: number, max: number): number | null {
  const value = node[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    return fail(attr, `${key} must be an integer between ${min} and ${max}.`);
  return value;
}

/**
 * An InsightActorsQuery over a TrendsQuery (`series`, `day`, `breakdown`, `compare`), with the page of
 * the ActorsQuery around it (`select`, `limit` default 100 and at most 50,000, `offset`). Searching,
 * filtering or another order of the actors is refused rather than ignored.
 */
export function parseTrendActorsRequest(node: Record<string, unknown>, outer: Record<string, unknown> | null, prefix: string): TrendActorsRequest {
  const series = integer(node, 'series', `${prefix}series`, 0, 49) ?? 0;
  const rawDay = node['day'];
  if (rawDay !== undefined && rawDay !== null && (typeof rawDay !== 'string' || rawDay.length > 40))
    fail(`${prefix}day`, 'day must be a bucket of the trend, as its days name it.');
  const rawBreakdown = node['breakdown'];
  let breakdown: string[] | null = null;
  if (rawBreakdown !== undefined && rawBreakdown !== null) {
    const list = Array.isArray(rawBreakdown) ? rawBreakdown : [rawBreakdown];
    if (list.length === 0 || list.length > 3 || !list.every((v) => typeof v === 'string' || typeof v === 'number'))
      fail(`${prefix}breakdown`, 'breakdown must be a breakdown value: a text, a number or a list of them.');
    breakdown = list.map(String);
  }
  const compare = node['compare'];
  if (compare !== undefined && compare !== null && compare !== 'current' && compare !== 'previous')
    fail(`${prefix}compare`, 'compare must be "current" or "previous".', 'invalid_choice');
  const page = outer ?? {};
  let select: string[] | null = null;
  if (page['select'] !== undefined && page['select'] !== null) {
    const raw = page['select'];
    if (!Array.isArray(raw) || raw.length > 50 || !raw.every((c) => typeof c === 'string')) fail('query__select', 'select must be a list of columns.');
    for (const column of raw as string[])
      if (!(TREND_ACTOR_COLUMNS as readonly string[]).includes(column))
        fail(
          'query__select',
          `Column ${JSON.stringify(column).slice(0, 60)} is not served for trend actors (${TREND_ACTOR_COLUMNS.join(', ')}).`,
          'not_supported',
        );
    select = (raw as string[]).length > 0 ? (raw as string[]) : null;
  }
  for (const key of ['properties', 'fixedProperties', 'search', 'orderBy']) {
    const value = page[key];
    const empty = value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
    if (!empty) fail(`query__${key}`, `${key} is not served for trend actors.`, 'not_supported');
  }
  const limit = integer(page, 'limit', 'query__limit', 1, Number.MAX_SAFE_INTEGER);
  const offset = integer(page, 'offset', 'query__offset', 0, 1e9);
  return {
    series,
    day: typeof rawDay === 'string' ? rawDay : null,
    breakdown,
    compare: compare === 'current' || compare === 'previous' ? compare : null,
    select,
    limit: Math.min(limit ?? DEFAULT_FUNNEL_ACTORS_LIMIT, MAX_FUNNEL_ACTORS_LIMIT),
    offset: offset ?? 0,
  };
}

const bucketIndex = (range: QueryDateRange, day: string) =>
  range.buckets.findIndex((b) => formatBucketDay(b, range.interval) === day || formatBucketDay(b, range.interval).slice(0, 10) === day);

/**
 * The instants a point's events fall in: its bucket (within the range), or the whole range. A
 * previous period's point may be named by the current period's day at the same place, as
 * PostHog's compare actors are (test_trends_compare_persons).
 */
function pointWindow(range: QueryDateRange, day: string | null, attr: string, current: QueryDateRange): { fromMs: number; toMs: number } {
  const rangeFrom = range.eventsFrom.toMillis();
  const rangeTo = range.to.toMillis();
  if (day === null) return { fromMs: rangeFrom, toMs: rangeTo };
  const own = bucketIndex(range, day);
  const index = own >= 0 || range === current ? own : bucketIndex(current, day);
  if (index < 0) return fail(attr, `day ${JSON.stringify(day).slice(0, 60)} is not a bucket of this trend.`);
  const start = range.buckets[index]!.toMillis();
  const next = range.buckets[index + 1]?.toMillis() ?? range.buckets[index]!.plus({ [`${range.interval}s`]: 1 }).toMillis();
  return { fromMs: Math.max(start, rangeFrom), toMs: Math.min(next - 1, rangeTo) };
}

/** The cohort a cohort breakdown's value names (`all`: null, every person), one of the trend's. */
function cohortOf(breakdowns: BreakdownInput[], values: string[], attr: string): number | null {
  const value = values[0]!;
  if (!breakdowns.some((b) => String(b.property) === value)) return fail(attr, `${JSON.stringify(value).slice(0, 60)} is not a cohort of this breakdown.`);
  return value === 'all' ? null : Number(value);
}

/**
 * How each breakdown's value picks the actors: the value itself, or for a histogram breakdown its
 * bin `[lo,hi]`, PostHog's every-bin `["",""]` or the null sentinel (trend_actors_query_builder.py).
 */
function breakdownMatches(breakdowns: BreakdownInput[], values: string[], attr: string): BreakdownMatch[] {
  if (values.length !== breakdowns.length) return fail(attr, `breakdown must hold ${breakdowns.length} value(s), one per breakdown.`);
  return breakdowns.map((b, i): BreakdownMatch => {
    const value = values[i]!;
    if (!b.histogram_bin_count) return { kind: 'value', value };
    if (value === EVERY_BIN) return { kind: 'any' };
    if (value === BREAKDOWN_NULL) return { kind: 'no_number' };
    let bin: unknown;
    try {
      bin = JSON.parse(value);
    } catch {
      bin = null;
    }
    if (!Array.isArray(bin) || bin.length !== 2 || !bin.every((x) => typeof x === 'number' && Number.isFinite(x)))
      return fail(attr, `A histogram breakdown value must be a bin [from,to] of valid float or int values, not ${JSON.stringify(value).slice(0, 60)}.`);
    return { kind: 'range', from: bin[0] as number, to: bin[1] as number };
  });
}

/** The histogram bins of each breakdown, as the trend computes them over its range (trends.query.ts). */
async function binsOf(ch: ClickHouseClient, teamId: number, input: SeriesQueryInput, ports: QuerySqlPorts): Promise<(HistogramBins | null)[]> {
  const query = new SeriesSqlBuilder(input, ports).histogramRange();
  const [row] = await queryClickhouse<Record<string, unknown>>(ch, { kind: 'trends.actors', teamId, sql: query.sql, params: query.params });
  const number = (v: unknown) => (v === null || v === undefined || !Number.isFinite(Number(v)) ? null : Number(v));
  return input.breakdowns.map((b, i) =>
    b.histogram_bin_count ? histogramBins(number(row?.[`min${i}`]), number(row?.[`max${i}`]), b.histogram_bin_count) : null,
  );
}

/** The breakdown values the trend keeps (ranked within its breakdown_limit), each as a list of one value per breakdown. */
async function keptValues(ch: ClickHouseClient, teamId: number, input: SeriesQueryInput, ports: QuerySqlPorts): Promise<string[][]> {
  const query = new SeriesSqlBuilder(input, ports).build();
  const rows = await queryClickhouse<{ bv: string | string[] }>(ch, { kind: 'trends.actors', teamId, sql: query.sql, params: query.params });
  const kept = new Map<string, string[]>();
  for (const { bv } of rows) {
    const values = Array.isArray(bv) ? bv : [bv];
    if (!values.includes(BREAKDOWN_OTHER)) kept.set(JSON.stringify(values), values);
  }
  return [...kept.values()];
}

/**
 * A page of the actors behind one point of a trend: those with an event of the series (its filters,
 * the trend's filters and test-account filters, the breakdown value) in the point's bucket (an
 * active-user math: in the N days ending with it; a cumulative line: from the range's start), each
 * with how many such events it has, ordered by actor id. A cohort breakdown's value is its cohort's
 * members ("all": everyone); "other" the values the trend folds into it; a histogram bin the events
 * whose value falls in it. A first-time math lists those whose first event is in the bucket, a
 * group math (unique_group) the groups.
 */
export async function runTrendActorsQuery(
  stores: { ch: ClickHouseClient; db: Sql },
  project: QueryProject,
  filter: ParsedTrendFilter,
  request: TrendActorsRequest,
  nowMs: number,
  ports: QueryPorts,
  prefix: string,
): Promise<FunnelActorsResult> {
  const series = filter.series[request.series] ?? fail(`${prefix}series`, `The trend has no series ${request.series}.`);
  const cohortBreakdown = filter.breakdowns.length > 0 && filter.breakdowns[0]!.type === 'cohort';
  const valueBreakdowns = cohortBreakdown ? [] : filter.breakdowns;
  const totalValue = TOTAL_VALUE_DISPLAYS.has(filter.display);
  const earliest = filter.date_from === 'all' ? await ports.earliestEventMs() : null;
  const current = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    interval: totalValue ? 'day' : filter.interval,
    timezone: project.timezone,
    weekStartDay: project.weekStartDay,
    nowMs,
    explicitDate: filter.explicit_date,
    earliestEventMs: earliest,
  });
  const range =
    request.compare === 'previous' ? (filter.compare_to ? shiftDateRange(current, parseCompareTo(filter.compare_to)) : previousPeriod(current)) : current;
  const window = pointWindow(range, totalValue ? null : request.day, `${prefix}day`, current);
  const activeDays = ACTIVE_WINDOW_DAYS[series.math];
  if (activeDays) window.fromMs = window.toMs - activeDays * 86_400_000 + 1;
  if (filter.display === 'ActionsLineGraphCumulative') window.fromMs = range.eventsFrom.toMillis();
  const properties: PropertyGroup = {
    type: 'AND',
    values: filter.filter_test_accounts ? [filter.properties, project.testAccountFilters] : [filter.properties],
  };
  // As the trend counts them: a group math's groups, else the trend's aggregation (trends.query.ts).
  const groupIndex = series.math_group_type_index ?? filter.aggregation_group_type_index;
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  const input: SeriesQueryInput = {
    series,
    properties,
    range,
    breakdowns: valueBreakdowns,
    cohortId: cohortBreakdown && request.breakdown ? cohortOf(filter.breakdowns, request.breakdown, `${prefix}breakdown`) : null,
    breakdownLimit: filter.breakdown_limit,
    aggregationGroupTypeIndex: groupIndex,
    totalValue: true,
  };
  const breakdown = valueBreakdowns.length > 0 ? request.breakdown : null;
  let builder: SeriesSqlBuilder;
  let condition = '1';
  if (breakdown?.includes(BREAKDOWN_OTHER)) {
    // "Other": the values the trend folds into it, those past its breakdown_limit, read from
    // the trend's own ranking over the range (binned as it bins them).
    const bins = valueBreakdowns.some((b) => b.histogram_bin_count) ? await binsOf(stores.ch, project.id, input, sqlPorts) : undefined;
    const kept = await keptValues(stores.ch, project.id, { ...input, totalValue, histogramBins: bins }, sqlPorts);
    builder = new SeriesSqlBuilder({ ...input, histogramBins: bins }, sqlPorts);
    condition = builder.otherMatchSql(kept);
  } else {
    builder = new SeriesSqlBuilder(input, sqlPorts);
    if (breakdown) condition = builder.breakdownMatchSql(breakdownMatches(valueBreakdowns, breakdown, `${prefix}breakdown`));
  }
  const query = builder.actorsSql(window, condition, request);
  const found = await queryClickhouse<{ actor_id: string; event_count: string | number }>(stores.ch, {
    kind: 'trends.actors',
    teamId: project.id,
    sql: query.sql,
    params: query.params,
  });
  const page = { select: null, search: null, limit: request.limit, offset: request.offset };
  const columns = request.select ?? actorColumns(page, groupIndex);
  const actorColumnsAsked = columns.filter((c) => c !== 'event_count');
  const actors = await actorsOfPage(
    stores.db,
    project.id,
    groupIndex,
    actorColumnsAsked,
    found.map((r) => r.actor_id),
    page,
  );
  const rows = found
    .slice(0, request.limit)
    .map((r, i) => columns.map((column) => (column === 'event_count' ? Number(r.event_count) : actors.results[i]![actorColumnsAsked.indexOf(column)])));
  return {
    ...actors,
    results: rows,
    columns,
    types: columns.map((c) => (c === 'event_count' ? 'UInt64' : actors.types[actorColumnsAsked.indexOf(c)]!)),
  };
}

/** The InsightActorsQuery's source, checked to be a TrendsQuery. */
export function trendsSourceOf(node: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const source = node['source'];
  if (!isJsonObject(source) || source['kind'] !== 'TrendsQuery')
    return fail(`${prefix}source`, 'The actors of a trend need its TrendsQuery as source.', 'required');
  return source;
}
