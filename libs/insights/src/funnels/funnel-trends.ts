import type { ClickHouseClient } from '@clickhouse/client';
import type { PropertyGroup } from '@sightline/properties';
import { formatBucketDay, formatBucketLabel, isoDateTime, type QueryDateRange } from '../common/date-range';
import { BREAKDOWN_NULL } from '../common/events-sql';
import type { ParsedFunnelFilter } from './funnel-filter';
import { FunnelTrendsSqlBuilder } from './funnel-trends.sql';
import { type QuerySqlPorts } from '../common/query-ports';

/** One period of a funnel trend, as PostHog's runner summarises it (`just_summarize`). */
export interface FunnelTrendPeriod {
  timestamp: string;
  reached_from_step_count: number;
  reached_to_step_count: number;
  conversion_rate: number;
}

export interface FunnelTrendSeries {
  /** The breakdown value (a list, as PostHog's funnels write it; a cohort's name), absent without a breakdown. */
  breakdown_value?: unknown;
  periods: FunnelTrendPeriod[];
}

export interface FunnelTrendsInput {
  filter: ParsedFunnelFilter;
  properties: PropertyGroup;
  range: QueryDateRange;
  ports: QuerySqlPorts;
  /** A cohort's name, a cohort breakdown's value (PostHog's funnel_trends.py _format_results answers it). */
  cohortName?: (cohortId: number) => string;
}

/** Percent with two decimals, 0 when nobody entered (PostHog's `round(to / from * 100, 2)`). */
function conversionRate(entered: number, converted: number): number {
  return entered > 0 ? Math.round((converted / entered) * 10_000) / 100 : 0;
}

/**
 * Every period of the range for each breakdown value (one series without a breakdown). The
 * `breakdown_limit` values most actors entered with are kept (ties: the greater value), as
 * PostHog's funnel_trends_udf.py orders and limits them.
 */
export async function funnelTrendSeries(ch: ClickHouseClient, input: FunnelTrendsInput): Promise<FunnelTrendSeries[]> {
  const { filter, range } = input;
  const days = range.buckets.map((at) => formatBucketDay(at, range.interval));
  const cohortBreakdown = filter.breakdowns.length > 0 && filter.breakdowns[0]!.type === 'cohort';
  const hasBreakdown = filter.breakdowns.length > 0;
  const cohorts: (number | null)[] = cohortBreakdown ? filter.breakdowns.map((b) => (b.property === 'all' ? null : Number(b.property))) : [null];
  const series: (FunnelTrendSeries & { total: number; key: string })[] = [];
  for (const cohort of cohorts) {
    const builder = new FunnelTrendsSqlBuilder({ filter, properties: input.properties, range, cohortId: cohort }, input.ports);
    const found = await ch
      .query({ query: builder.trendsSql(), query_params: builder.params.values, format: 'JSONEachRow' })
      .then((r) => r.json<{ bv: string | string[]; b: string; entered: string; converted: string }>());
    const byValue = new Map<string, Map<string, { entered: number; converted: number }>>();
    for (const row of found) {
      const key = cohortBreakdown || !hasBreakdown ? '' : JSON.stringify(breakdownList(row.bv));
      const periods = byValue.get(key) ?? new Map<string, { entered: number; converted: number }>();
      periods.set(row.b, { entered: Number(row.entered), converted: Number(row.converted) });
      byValue.set(key, periods);
    }
    if (byValue.size === 0 && (!hasBreakdown || cohortBreakdown)) byValue.set('', new Map());
    for (const [key, periods] of byValue) {
      const rows = days.map((day): FunnelTrendPeriod => {
        const counts = periods.get(day) ?? { entered: 0, converted: 0 };
        return {
          timestamp: day,
          reached_from_step_count: counts.entered,
          reached_to_step_count: counts.converted,
          conversion_rate: conversionRate(counts.entered, counts.converted),
        };
      });
      const entry: FunnelTrendSeries & { total: number; key: string } = {
        periods: rows,
        total: rows.reduce((sum, p) => sum + p.reached_from_step_count, 0),
        key,
      };
      // The "all users" cohort is PostHog's cohort 0, answered as ["None"].
      if (cohortBreakdown) entry.breakdown_value = cohort === null ? ['None'] : (input.cohortName?.(cohort) ?? cohort);
      else if (hasBreakdown) entry.breakdown_value = JSON.parse(key) as string[];
      series.push(entry);
    }
  }
  if (!hasBreakdown || cohortBreakdown) return series.map(({ total: _t, key: _k, ...rest }) => rest);
  series.sort((a, b) => b.total - a.total || compareLists(b.breakdown_value as string[], a.breakdown_value as string[]));
  // The kept values are then answered in value order (PostHog's _format_summarized_results sorts them).
  const kept = series.slice(0, filter.breakdown_limit);
  kept.sort((a, b) => compareLists(a.breakdown_value as string[], b.breakdown_value as string[]));
  return kept.map(({ total: _t, key: _k, ...rest }) => rest);
}

/** Lists of texts compared item by item, as Python compares them. */
function compareLists(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length - b.length;
}

/** A breakdown value as PostHog's funnels answer it: a list of texts, '' for a missing value. */
function breakdownList(value: string | string[]): string[] {
  return (Array.isArray(value) ? value : [value]).map((v) => (v === BREAKDOWN_NULL ? '' : v));
}

/** The legacy answer: one series per breakdown value of `data` (conversion rates), `days` and `labels`. */
export async function runFunnelTrends(ch: ClickHouseClient, input: FunnelTrendsInput): Promise<Record<string, unknown>[]> {
  const { filter, range } = input;
  const labels = range.buckets.map((at) => formatBucketLabel(at, range));
  const series = await funnelTrendSeries(ch, input);
  return series.map((s) => ({
    count: s.periods.length,
    data: s.periods.map((p) => p.conversion_rate),
    days: s.periods.map((p) => p.timestamp),
    labels,
    label: 'Conversion rate',
    ...(s.breakdown_value !== undefined ? { breakdown_value: s.breakdown_value } : {}),
    filter: { ...filter.request, date_from: isoDateTime(range.from), date_to: isoDateTime(range.to) },
  }));
}
