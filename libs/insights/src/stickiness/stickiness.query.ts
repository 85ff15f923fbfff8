import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import type { PropertyGroup } from '@sightline/properties';
import { parseCompareTo, previousPeriod, resolveQueryDateRange, shiftDateRange, type QueryDateRange } from '../common/date-range';
import type { QueryPorts, QuerySqlPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import type { SeriesInput } from '../common/series';
import type { ParsedStickinessFilter } from './stickiness-filter';
import { StickinessSqlBuilder } from './stickiness.sql';

/** One series of a stickiness answer, as PostHog's StickinessQueryRunner gives it. */
export interface StickinessSeries {
  count: number;
  /** data[i]: the actors active on i + 1 intervals (cumulative: on i + 1 or more). */
  data: number[];
  /** 1 … N, the interval counts. */
  days: number[];
  label: string;
  labels: string[];
  action: { order: number; type: 'events'; name: string; id: string | null };
  compare?: boolean;
  compare_label?: 'current' | 'previous';
}

/** A stickiness answer, in the envelope every insight kind shares. */
export interface StickinessResult {
  result: StickinessSeries[];
  next: null;
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
}

/** One period of a stickiness query: the current range, or the one compared with it. */
export interface StickinessPeriod {
  range: QueryDateRange;
  label: 'current' | 'previous' | null;
}

/** The date range (and the compared one) and the filters every series of a stickiness query reads. */
export async function stickinessPeriods(
  project: QueryProject,
  filter: ParsedStickinessFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<{ periods: StickinessPeriod[]; properties: PropertyGroup }> {
  const earliest = filter.date_from === 'all' ? await ports.earliestEventMs() : null;
  const range = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    interval: filter.interval,
    timezone: project.timezone,
    weekStartDay: project.weekStartDay,
    nowMs,
    explicitDate: filter.explicit_date,
    earliestEventMs: earliest,
  });
  const periods: StickinessPeriod[] = [{ range, label: filter.compare ? 'current' : null }];
  if (filter.compare) {
    const shift = filter.compare_to ? parseCompareTo(filter.compare_to) : null;
    periods.push({ range: shift ? shiftDateRange(range, shift) : previousPeriod(range), label: 'previous' });
  }
  const properties: PropertyGroup = {
    type: 'AND',
    values: filter.filter_test_accounts ? [filter.properties, project.testAccountFilters] : [filter.properties],
  };
  return { periods, properties };
}

/**
 * How many intervals a period holds, PostHog's `ceil(dateDiff(interval, date_from_start_of_interval,
 * date_to_start_of_interval + 1 interval) / intervalCount)`: its buckets, grouped by intervalCount.
 */
export const intervalsOf = (range: QueryDateRange, intervalCount: number) => Math.ceil(range.buckets.length / intervalCount);

/** The series' name in its label and action: the event (null for all events) or the action's name. */
export const seriesEvent = (series: SeriesInput, ports: QueryPorts): string | null =>
  series.kind === 'actions' ? ports.actionName(Number(series.id)) : (series.id as string | null);

/**
 * Runs a checked stickiness filter for one project: per series (and per period when comparing,
 * current then previous) one query, shaped as PostHog's StickinessQueryRunner.calculate.
 */
export async function runStickinessQuery(
  ch: ClickHouseClient,
  project: QueryProject,
  filter: ParsedStickinessFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<StickinessResult> {
  const { periods, properties } = await stickinessPeriods(project, filter, nowMs, ports);
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  const jobs = filter.series.flatMap((series, order) => periods.map((period) => ({ series, order, period })));
  const result = await Promise.all(
    jobs.map(async ({ series, order, period }): Promise<StickinessSeries> => {
      const builder = new StickinessSqlBuilder(
        { series, properties, range: period.range, intervalCount: filter.interval_count, criteria: filter.criteria },
        sqlPorts,
      );
      const { sql, params } = builder.countsSql();
      const rows = await queryClickhouse<{ num_intervals: string | number; actors: string | number }>(ch, {
        kind: 'stickiness',
        teamId: project.id,
        sql,
        params,
      });
      const n = intervalsOf(period.range, filter.interval_count);
      const counts = new Array<number>(n).fill(0);
      for (const row of rows) {
        const i = Number(row.num_intervals) - 1;
        if (i >= 0 && i < n) counts[i] = Number(row.actors);
      }
      const count = counts.reduce((a, b) => a + b, 0);
      // Cumulative: bar N holds the actors active on N or more intervals; the count is the same.
      const data = filter.cumulative ? counts.map((_, i) => counts.slice(i).reduce((a, b) => a + b, 0)) : counts;
      const days = counts.map((_, i) => i + 1);
      const interval = period.range.interval;
      const event = seriesEvent(series, ports);
      const out: StickinessSeries = {
        count,
        data,
        days,
        label: event ?? 'All events',
        labels: days.map((day) => `${day} ${interval}${day === 1 ? '' : 's'}${filter.cumulative ? ' or more' : ''}`),
        action: { order, type: 'events', name: event ?? 'All events', id: event },
      };
      if (period.label) {
        out.compare = true;
        out.compare_label = period.label;
      }
      return out;
    }),
  );
  return { result, next: null, timezone: project.timezone, is_cached: false, last_refresh: new Date(nowMs).toISOString() };
}
