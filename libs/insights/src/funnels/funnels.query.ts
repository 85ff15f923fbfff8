import type { ClickHouseClient } from '@clickhouse/client';
import type { PropertyGroup } from '@sightline/properties';
import { resolveQueryDateRange, type QueryDateRange } from '../common/date-range';
import type { ParsedFunnelFilter } from './funnel-filter';
import { ALL_USERS_COHORT_ID } from './funnel-breakdown.sql';
import { FunnelSqlBuilder } from './funnel.sql';
import { runFunnelTrends } from './funnel-trends';
import { funnelPeopleUrl } from './funnel-people-url';
import { type QuerySqlPorts, type QueryPorts } from '../common/query-ports';
import { type QueryProject } from '../common/query-project';

export interface FunnelStep {
  action_id: string | number | null;
  /** null for an all-events step, as PostHog answers (test_funnel_with_any_event). */
  name: string | null;
  custom_name: string | null;
  order: number;
  people: [];
  count: number;
  type: 'events' | 'actions';
  average_conversion_time: number | null;
  median_conversion_time: number | null;
  converted_people_url: string;
  dropped_people_url: string | null;
  breakdown?: unknown;
  breakdown_value?: unknown;
}

export interface FunnelResult {
  result: FunnelStep[] | FunnelStep[][] | { bins: [number, number][]; average_conversion_time: number | null } | Record<string, unknown>[];
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
}

const finite = (v: unknown): number | null => {
  // ClickHouse writes an average over no conversions (nan) as null.
  if (v === null || v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};

/** The rows of a query, as JSON objects. */
export async function rows<T>(ch: ClickHouseClient, sql: string, params: Record<string, unknown>): Promise<T[]> {
  return (await ch.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<T>();
}

/** PostHog's automatic bin count stays within 1..60 (funnel_time_to_convert_udf.py). */
const MAX_AUTO_BINS = 60;
/** The bin width when every conversion took the same whole second (PostHog's fallback). */
const SINGLE_VALUE_BIN_SECONDS = 60;

/**
 * PostHog's time-to-convert bins (funnel_time_to_convert_udf.py): `bin_count` bins (default the
 * cube root of the number of conversions, rounded up, within 1..60) of equal width in whole
 * seconds from the fastest conversion, then one bin more starting at the last edge. A conversion
 * falls in bin floor((seconds - fastest) / width), so the slowest one lands in that closing bin
 * whenever the span divides evenly (test_auto_bin_count_single_step: [[2220,2],[42510,0],[82800,1]]).
 */
export function timeToConvertBins(seconds: number[], binCount: number | null): [number, number][] {
  if (seconds.length === 0) return [];
  const min = Math.floor(Math.min(...seconds));
  const max = Math.ceil(Math.max(...seconds));
  const count = binCount ?? Math.min(MAX_AUTO_BINS, Math.max(1, Math.ceil(Math.cbrt(seconds.length))));
  const width = Math.ceil((max - min) / count) || SINGLE_VALUE_BIN_SECONDS;
  const bins: [number, number][] = Array.from({ length: count + 1 }, (_, i) => [min + i * width, 0]);
  for (const s of seconds) bins[Math.floor((s - min) / width)]![1]++;
  return bins;
}

/**
 * Time to convert when nobody converted: PostHog still answers its histogram, every bin empty.
 * Its UDF query (funnel_time_to_convert_udf.py: ordered, strict) reads the fastest and slowest
 * times of no conversions as 0, so `bin_count` bins (default 1) of its 60-second fallback width
 * from 0; the older query unordered funnels take (funnel_time_to_convert.py) spans 0 to 1 second
 * instead (its `ifNull(..., 0)` and `ifNull(..., 1)`), so bins 1 second wide.
 */
export function noConversionBins(binCount: number | null, orderType: ParsedFunnelFilter['orderType']): [number, number][] {
  const width = orderType === 'unordered' ? 1 : SINGLE_VALUE_BIN_SECONDS;
  return Array.from({ length: (binCount ?? 1) + 1 }, (_, i) => [i * width, 0]);
}

/** A funnel's date range (its interval for a trend, else days) and query-wide filters (with test-account filters when asked). */
export async function funnelRangeAndFilters(
  project: QueryProject,
  filter: ParsedFunnelFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<{ range: QueryDateRange; properties: PropertyGroup }> {
  const earliest = filter.date_from === 'all' ? await ports.earliestEventMs() : null;
  const range = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    interval: filter.vizType === 'trends' ? filter.interval : 'day',
    timezone: project.timezone,
    weekStartDay: project.weekStartDay,
    nowMs,
    explicitDate: filter.explicit_date,
    earliestEventMs: earliest,
  });
  const properties: PropertyGroup = {
    type: 'AND',
    values: filter.filter_test_accounts ? [filter.properties, project.testAccountFilters] : [filter.properties],
  };
  return { range, properties };
}

/** Runs a checked funnel for one project, shaped as PostHog's legacy funnel answer for its viz type. */
export async function runFunnelQuery(
  ch: ClickHouseClient,
  project: QueryProject,
  filter: ParsedFunnelFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<FunnelResult> {
  const answer = (result: FunnelResult['result']): FunnelResult => ({
    result,
    timezone: project.timezone,
    is_cached: false,
    last_refresh: new Date(nowMs).toISOString(),
  });
  if (filter.steps.length === 0) return answer([]);
  const { range, properties } = await funnelRangeAndFilters(project, filter, nowMs, ports);
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  const builder = (cohortId: number | null) => new FunnelSqlBuilder({ filter, properties, range, cohortId }, sqlPorts);

  if (filter.vizType === 'time_to_convert') {
    const b = builder(null);
    const seconds = (await rows<{ seconds: number }>(ch, b.conversionTimesSql(filter.fromStep, filter.toStep), b.params.values)).map((r) => Number(r.seconds));
    const mean = seconds.length ? seconds.reduce((a, s) => a + s, 0) / seconds.length : null;
    // An unordered funnel's time to convert is PostHog's non-UDF query, which rounds the mean to
    // hundredths (funnel_time_to_convert.py); the UDF one (ordered, strict) does not.
    const average = mean !== null && filter.orderType === 'unordered' ? Math.round(mean * 100) / 100 : mean;
    const bins = seconds.length ? timeToConvertBins(seconds, filter.binCount) : noConversionBins(filter.binCount, filter.orderType);
    return answer({ bins, average_conversion_time: average });
  }

  if (filter.vizType === 'trends') {
    return answer(await runFunnelTrends(ch, { filter, properties, range, ports: sqlPorts, cohortName: (id) => ports.cohortName(id) }));
  }

  const cohortBreakdown = filter.breakdowns.length > 0 && filter.breakdowns[0]!.type === 'cohort';
  const cohorts: (number | 'all' | null)[] = cohortBreakdown ? filter.breakdowns.map((b) => (b.property === 'all' ? 'all' : Number(b.property))) : [null];
  const groups: { counts: number[]; steps: FunnelStep[] }[] = [];
  for (const cohort of cohorts) {
    const b = builder(typeof cohort === 'number' ? cohort : null);
    const found = await rows<{ bv: string | string[]; counts: number[]; averages: (number | null)[]; medians: (number | null)[] }>(
      ch,
      b.stepsSql(),
      b.params.values,
    );
    const optional = filter.steps.some((s) => s.optionalInFunnel);
    for (const row of found) {
      const breakdownValue = cohort === 'all' ? ALL_USERS_COHORT_ID : cohort !== null ? cohort : filter.breakdowns.length === 0 ? undefined : row.bv;
      const steps = filter.steps.map((step, i): FunnelStep => {
        const unordered = filter.orderType === 'unordered';
        // An unordered funnel's steps are "how many steps done", not the series (base.py _serialize_step).
        const name = unordered
          ? `Completed ${i + 1} step${i === 0 ? '' : 's'}`
          : step.kind === 'actions'
            ? ports.actionName(Number(step.id))
            : allEventsAsNull(step.id);
        const reached = Number(row.counts[i] ?? 0);
        const out: FunnelStep = {
          action_id: unordered ? null : step.id,
          name,
          custom_name: unordered ? null : step.custom_name,
          order: i,
          people: [],
          count: reached,
          type: step.kind,
          // A step nobody reached has no conversion time (null, not 0), breakdown values included;
          // with optional steps the time at step i is the i-th gap between required steps, which
          // does not depend on who took step i (funnel_udf.py).
          average_conversion_time: i === 0 || (reached === 0 && !optional) ? null : finite(row.averages[i]),
          median_conversion_time: i === 0 || (reached === 0 && !optional) ? null : finite(row.medians[i]),
          converted_people_url: funnelPeopleUrl(project.id, filter.request, i + 1, breakdownValue),
          dropped_people_url: i === 0 ? null : funnelPeopleUrl(project.id, filter.request, -(i + 1), breakdownValue),
        };
        if (breakdownValue !== undefined) {
          out.breakdown = cohort === 'all' ? 'all users' : typeof cohort === 'number' ? ports.cohortName(cohort) : breakdownValue;
          out.breakdown_value = breakdownValue;
        }
        return out;
      });
      groups.push({ counts: row.counts.map(Number), steps });
    }
  }
  if (filter.breakdowns.length === 0) {
    const only = groups[0]?.steps ?? filter.steps.map((step, i) => emptyStep(step, i, ports, funnelPeopleUrl.bind(null, project.id, filter.request)));
    return answer(only);
  }
  // PostHog's funnel orders breakdown values by the count at the last step, then at each earlier
  // step, all descending (funnel_udf.py); the SQL breaks ties by value, cohorts keep their order.
  groups.sort((a, b) => {
    for (let i = a.counts.length - 1; i >= 0; i--) if (a.counts[i] !== b.counts[i]) return b.counts[i]! - a.counts[i]!;
    return 0;
  });
  return answer(groups.map((g) => g.steps));
}

function emptyStep(
  step: ParsedFunnelFilter['steps'][number],
  i: number,
  ports: QueryPorts,
  peopleUrl: (funnelStep: number, breakdownValue: unknown) => string,
): FunnelStep {
  return {
    action_id: step.id,
    name: step.kind === 'actions' ? ports.actionName(Number(step.id)) : allEventsAsNull(step.id),
    custom_name: step.custom_name,
    order: i,
    people: [],
    count: 0,
    type: step.kind,
    average_conversion_time: null,
    median_conversion_time: null,
    converted_people_url: peopleUrl(i + 1, undefined),
    dropped_people_url: i === 0 ? null : peopleUrl(-(i + 1), undefined),
  };
}

/** An event step's name: its event, or null for all events (PostHog's EventsNode.event). */
function allEventsAsNull(id: string | number | null): string | null {
  return id === null ? null : String(id);
}
