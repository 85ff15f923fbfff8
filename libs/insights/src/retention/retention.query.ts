import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import type { PropertyGroup } from '@sightline/properties';
import { isoDateTime } from '../common/date-range';
import { BREAKDOWN_OTHER } from '../common/events-sql';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { resolveRetentionDateRange, type RetentionDateRange } from './retention-date-range';
import type { ParsedRetentionFilter } from './retention-filter';
import { RetentionSqlBuilder } from './retention.sql';

/** One cell of a retention row: the actors back `label` intervals after the start interval. */
export interface RetentionValue {
  count: number;
  label: string;
}

/** One row: the cohort of a start interval (PostHog's RetentionResult). */
export interface RetentionRow {
  values: RetentionValue[];
  label: string;
  /** The start interval's first instant, in the project's timezone. */
  date: string;
  breakdown_value?: string;
}

export interface RetentionResult {
  result: RetentionRow[];
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
}

/** The range and query-wide filters of a retention query (the test-account filters when asked). */
export async function retentionRangeAndFilters(
  project: QueryProject,
  filter: ParsedRetentionFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<{ range: RetentionDateRange; properties: PropertyGroup }> {
  const earliest = filter.date_from === 'all' ? await ports.earliestEventMs() : null;
  const range = resolveRetentionDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    period: filter.period,
    totalIntervals: filter.totalIntervals,
    timezone: project.timezone,
    weekStartDay: project.weekStartDay,
    nowMs,
    earliestEventMs: earliest,
  });
  const properties: PropertyGroup = {
    type: 'AND',
    values: filter.filter_test_accounts ? [filter.properties, project.testAccountFilters] : [filter.properties],
  };
  return { range, properties };
}

const title = (range: RetentionDateRange) => range.interval.charAt(0).toUpperCase() + range.interval.slice(1);

/** The rows of one breakdown value (or of all actors): every start interval, `lookahead` cells each, zeros included. */
function rowsOf(range: RetentionDateRange, counts: Map<string, number>, breakdownValue?: string): RetentionRow[] {
  const name = title(range);
  return range.starts.map((start, i) => ({
    values: Array.from({ length: range.lookahead }, (_, offset) => ({ count: counts.get(`${i}:${offset}`) ?? 0, label: `${name} ${offset}` })),
    label: `${name} ${i}`,
    date: isoDateTime(start),
    ...(breakdownValue === undefined ? {} : { breakdown_value: breakdownValue }),
  }));
}

/**
 * A retention query's answer as PostHog's RetentionQueryRunner gives it: a row per start interval
 * with `total_intervals` counts each (a matrix: cells past the range count 0). With a breakdown,
 * the rows of each value in turn, values ranked by their cohorts' total size (largest first, then
 * by value), those past breakdown_limit merged into PostHog's "other" value.
 */
export async function runRetentionQuery(
  ch: ClickHouseClient,
  project: QueryProject,
  filter: ParsedRetentionFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<RetentionResult> {
  const { range, properties } = await retentionRangeAndFilters(project, filter, nowMs, ports);
  const builder = new RetentionSqlBuilder({ filter, range, properties }, { ...ports, teamId: project.id, nowMs });
  const sql = builder.countsSql();
  const found = await queryClickhouse<{ start_index: string | number; intervals_from_base: string | number; breakdown_value?: string; count: string | number }>(
    ch,
    { kind: 'retention', teamId: project.id, sql, params: builder.params.values },
  );
  const base = { timezone: project.timezone, is_cached: false, last_refresh: new Date(nowMs).toISOString() };
  if (filter.breakdowns.length === 0) {
    const counts = new Map(found.map((r) => [`${r.start_index}:${r.intervals_from_base}`, Number(r.count)]));
    return { ...base, result: rowsOf(range, counts) };
  }
  const totals = new Map<string, number>();
  for (const r of found) {
    const value = r.breakdown_value ?? '';
    if (Number(r.intervals_from_base) === 0) totals.set(value, (totals.get(value) ?? 0) + Number(r.count));
  }
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([value]) => value);
  const kept = ranked.slice(0, filter.breakdown_limit);
  const others = new Set(ranked.slice(filter.breakdown_limit));
  const byValue = new Map<string, Map<string, number>>();
  for (const r of found) {
    const value = others.has(r.breakdown_value ?? '') ? BREAKDOWN_OTHER : (r.breakdown_value ?? '');
    const counts = byValue.get(value) ?? new Map<string, number>();
    byValue.set(value, counts);
    const key = `${r.start_index}:${r.intervals_from_base}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(r.count));
  }
  const order = others.size > 0 ? [...kept, BREAKDOWN_OTHER] : kept;
  return { ...base, result: order.flatMap((value) => rowsOf(range, byValue.get(value) ?? new Map(), value)) };
}
