import type { ClickHouseClient } from '@clickhouse/client';
import { isJsonObject } from '@sightline/json-input';
import type { PropertyGroup } from '@sightline/properties';
import { resolveQueryDateRange } from '../common/date-range';
import { funnelsQueryToFilter } from './funnels-query-node';
import type { ParsedFunnelFilter } from './funnel-filter';
import { chainToElements } from './chain-elements';
import { AUTOCAPTURE_EVENT, AUTOCAPTURE_EVENT_TYPE, ELEMENTS_DIVIDER, FunnelCorrelationSqlBuilder } from './funnel-correlation.sql';
import { QueryFilterError } from '../common/query-filter-error';
import { type QuerySqlPorts, type QueryPorts } from '../common/query-ports';
import { type QueryProject } from '../common/query-project';

export const CORRELATION_TYPES = ['events', 'properties', 'event_with_properties'] as const;
/** PostHog's constants (ee/clickhouse/queries/funnels/funnel_correlation.py). */
const PRIOR_COUNT = 1;
const MIN_PERSON_COUNT = 25;
const MIN_PERSON_PERCENTAGE = 0.02;
const TOP = 10;

export interface CorrelationOptions {
  type: (typeof CORRELATION_TYPES)[number];
  names: string[];
  eventNames: string[];
  excludeEvents: string[];
  excludeNames: string[];
}

export interface CorrelationRow {
  event: { event: string; properties: Record<string, unknown>; elements: unknown[] };
  success_count: number;
  failure_count: number;
  odds_ratio: number;
  correlation_type: 'success' | 'failure';
}

export interface CorrelationResult {
  result: { events: CorrelationRow[]; skewed: boolean };
  last_refresh: string;
  is_cached: boolean;
}

function stringList(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? (value.startsWith('[') ? (JSON.parse(value) as unknown) : [value]) : value;
  if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) throw new QueryFilterError(key, `${key} must be a list of strings.`, 'invalid');
  if (list.length > 1_000) throw new QueryFilterError(key, `${key} may hold at most 1000 names.`, 'max_length');
  return list as string[];
}

/** The correlation fields of a funnel request (legacy snake_case). */
export function parseCorrelationOptions(body: Record<string, unknown>): CorrelationOptions {
  const raw = body['funnel_correlation_type'] ?? 'events';
  if (typeof raw !== 'string' || !(CORRELATION_TYPES as readonly string[]).includes(raw)) {
    throw new QueryFilterError(
      'funnel_correlation_type',
      `"${String(raw).slice(0, 40)}" is not a valid choice (one of: ${CORRELATION_TYPES.join(', ')}).`,
      'invalid_choice',
    );
  }
  const type = raw as CorrelationOptions['type'];
  const names = stringList(body, 'funnel_correlation_names');
  const eventNames = stringList(body, 'funnel_correlation_event_names');
  // PostHog's runner refuses these with a ValidationError (test_correlation_with_properties_raises_validation_error).
  if (type === 'properties' && names.length === 0) {
    throw new QueryFilterError('funnel_correlation_names', 'Property correlation needs at least one property name (funnel_correlation_names).', 'required');
  }
  if (type === 'event_with_properties' && eventNames.length === 0) {
    throw new QueryFilterError(
      'funnel_correlation_event_names',
      'Event property correlation needs at least one event name (funnel_correlation_event_names).',
      'required',
    );
  }
  return {
    type,
    names,
    eventNames,
    excludeEvents: stringList(body, 'funnel_correlation_exclude_event_names'),
    excludeNames: [...stringList(body, 'funnel_correlation_exclude_names'), ...stringList(body, 'funnel_correlation_event_exclude_property_names')],
  };
}

/**
 * The funnel in a correlation request: at the top level (legacy filter), inside `filters` (an
 * Insight body) or as `query` (a FunnelsQuery node, or an InsightVizNode around one).
 */
export function funnelBodyOf(body: Record<string, unknown>): Record<string, unknown> {
  if (body['events'] !== undefined || body['actions'] !== undefined) return body;
  if (isJsonObject(body['filters'])) return { ...body, ...body['filters'] };
  let query = body['query'];
  if (typeof query === 'string') {
    try {
      query = JSON.parse(query) as unknown;
    } catch {
      throw new QueryFilterError('query', 'query is not valid JSON.', 'parse_error');
    }
  }
  if (isJsonObject(query) && query['kind'] === 'InsightVizNode') query = query['source'];
  if (isJsonObject(query)) {
    if (query['kind'] !== 'FunnelsQuery')
      throw new QueryFilterError('query', `Only a FunnelsQuery can be correlated, not ${String(query['kind']).slice(0, 40)}.`, 'invalid');
    return { ...body, ...funnelsQueryToFilter(query) };
  }
  return body;
}

/**
 * PostHog's odds ratio with a prior of 1: ((s+1)(F−f+1)) / ((S−s+1)(f+1)). Results under
 * min(25, 2% of actors) are dropped; when either side has no actors the answer is empty and
 * `skewed`; otherwise skewed when one side outnumbers the other more than ten to one.
 */
export function correlate(
  rows: { name: string; s: number; f: number }[],
  successTotal: number,
  failureTotal: number,
  describe: (name: string) => CorrelationRow['event'] = (name) => ({ event: name, properties: {}, elements: [] }),
  significance: { minPersonCount: number; minPersonPercentage: number } = { minPersonCount: MIN_PERSON_COUNT, minPersonPercentage: MIN_PERSON_PERCENTAGE },
): { events: CorrelationRow[]; skewed: boolean } {
  if (successTotal === 0 || failureTotal === 0) return { events: [], skewed: true };
  const skewed = successTotal / failureTotal > 10 || failureTotal / successTotal > 10;
  const floor = Math.min(significance.minPersonCount, significance.minPersonPercentage * (successTotal + failureTotal));
  const scored = rows
    .filter((r) => r.s + r.f >= floor)
    .map((r): CorrelationRow => {
      const odds = ((r.s + PRIOR_COUNT) * (failureTotal - r.f + PRIOR_COUNT)) / ((successTotal - r.s + PRIOR_COUNT) * (r.f + PRIOR_COUNT));
      return {
        event: describe(r.name),
        success_count: r.s,
        failure_count: r.f,
        odds_ratio: odds,
        correlation_type: odds > 1 ? 'success' : 'failure',
      };
    });
  // Equal odds are ordered by name, so the answer does not depend on the order ClickHouse groups in.
  const byName = (a: CorrelationRow, b: CorrelationRow) => (a.event.event < b.event.event ? -1 : a.event.event > b.event.event ? 1 : 0);
  const success = scored
    .filter((r) => r.correlation_type === 'success')
    .sort((a, b) => b.odds_ratio - a.odds_ratio || byName(a, b))
    .slice(0, TOP);
  const failure = scored
    .filter((r) => r.correlation_type === 'failure')
    .sort((a, b) => a.odds_ratio - b.odds_ratio || byName(a, b))
    .slice(0, TOP);
  return { events: [...success, ...failure], skewed };
}

export async function runFunnelCorrelation(
  ch: ClickHouseClient,
  project: QueryProject,
  filter: ParsedFunnelFilter,
  options: CorrelationOptions,
  nowMs: number,
  ports: QueryPorts,
): Promise<CorrelationResult> {
  const answer = (result: CorrelationResult['result']): CorrelationResult => ({ result, last_refresh: new Date(nowMs).toISOString(), is_cached: false });
  if (filter.steps.length < 2) return answer({ events: [], skewed: false });
  const range = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    interval: 'day',
    timezone: project.timezone,
    weekStartDay: project.weekStartDay,
    nowMs,
    explicitDate: filter.explicit_date,
    earliestEventMs: filter.date_from === 'all' ? await ports.earliestEventMs() : null,
  });
  const properties: PropertyGroup = {
    type: 'AND',
    values: filter.filter_test_accounts ? [filter.properties, project.testAccountFilters] : [filter.properties],
  };
  if (options.type === 'properties' && filter.aggregateByHogQL !== null && filter.aggregation_group_type_index === null) {
    throw new QueryFilterError(
      'funnel_aggregate_by_hogql',
      "Property correlation compares persons' properties; a funnel aggregated by a HogQL expression does not count persons. Correlate events instead.",
      'invalid',
    );
  }
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  // Correlation looks at the whole funnel, not per breakdown value.
  const unbroken = { ...filter, breakdowns: [] };
  // The events of the steps, and of the steps of the actions that are steps (PostHog's _get_funnel_step_names).
  const stepEvents = filter.steps.flatMap((s) => (s.kind === 'actions' ? (ports.actionEventNames?.(Number(s.id)) ?? []) : s.id !== null ? [String(s.id)] : []));
  const query = new FunnelCorrelationSqlBuilder({ filter: unbroken, properties, range, cohortId: null }, sqlPorts);
  const found = await ch
    .query({ query: query.correlationSql(options.type, { ...options, stepEvents }), query_params: query.params.values, format: 'JSONEachRow' })
    .then((r) => r.json<{ name: string | null; s: string; f: string }>());
  // The row named NULL counts every actor who entered the funnel.
  const totals = found.find((r) => r.name === null);
  const rows = found.filter((r): r is { name: string; s: string; f: string } => r.name !== null);
  const successTotal = Number(totals?.s ?? 0);
  const failureTotal = Number(totals?.f ?? 0);
  const autocapture = options.type === 'event_with_properties' && options.eventNames.includes(AUTOCAPTURE_EVENT);
  return answer(
    correlate(
      rows.map((r) => ({ name: r.name, s: Number(r.s), f: Number(r.f) })),
      successTotal,
      failureTotal,
      autocapture ? describeAutocapture : undefined,
    ),
  );
}

/**
 * An autocapture correlation's name with its event type and elements, as PostHog's
 * serialize_event_with_property answers it (`$autocapture::elements_chain::<type>__~~__<chain>`).
 */
function describeAutocapture(name: string): CorrelationRow['event'] {
  const prefix = `${AUTOCAPTURE_EVENT}::elements_chain::`;
  const divider = name.indexOf(ELEMENTS_DIVIDER, prefix.length);
  if (!name.startsWith(prefix) || divider === -1) return { event: name, properties: {}, elements: [] };
  return {
    event: name,
    properties: { [AUTOCAPTURE_EVENT_TYPE]: name.slice(prefix.length, divider) },
    elements: chainToElements(name.slice(divider + ELEMENTS_DIVIDER.length)),
  };
}
