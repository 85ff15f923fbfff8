import { isJsonObject } from '@sightline/json-input';
import { legacyTrendKind } from './legacy-trend-kind';
import { isQueryKind, QUERY_RUNNERS, runnerOf, type ParsedQuery, type QueryKind } from './registry';

/** The kinds the query API takes, as its refusal lists them. */
export const QUERY_API_KINDS: readonly QueryKind[] = (Object.keys(QUERY_RUNNERS) as QueryKind[]).filter((kind) => runnerOf(kind).queryApi);

/**
 * A query API node parsed by its kind's runner: a node of a kind the query API takes, or an
 * ActorsQuery around one that lists actors (read with the ActorsQuery's page). Null when no
 * runner takes it.
 */
export function parseQueryNode(node: Record<string, unknown>): ParsedQuery | null {
  const outer = node['kind'] === 'ActorsQuery' ? node : null;
  const source = outer ? outer['source'] : node;
  if (isJsonObject(source) && source['kind'] === 'InsightActorsQuery') return parseInsightActorsQuery(source, outer);
  if (!isJsonObject(source) || !isQueryKind(source['kind'])) return null;
  const api = runnerOf(source['kind']).queryApi;
  if (!api || (outer && !api.actorsSource)) return null;
  return { kind: source['kind'], query: api.parse(source, outer) } as ParsedQuery;
}

/** An InsightActorsQuery, by the runner that lists the actors of its source's kind; null when none does. */
function parseInsightActorsQuery(node: Record<string, unknown>, outer: Record<string, unknown> | null): ParsedQuery | null {
  const inner = node['source'];
  if (!isJsonObject(inner)) return null;
  const kind = (Object.keys(QUERY_RUNNERS) as QueryKind[]).find((k) => runnerOf(k).queryApi?.insightActorsOf === inner['kind']);
  return kind ? ({ kind, query: runnerOf(kind).queryApi!.parse(node, outer) } as ParsedQuery) : null;
}

/** What an insight kind (one a saved insight can be) answers. */
export interface InsightAnswer {
  result: unknown;
  is_cached: boolean;
  last_refresh: string;
  timezone: string;
}

/** What a saved insight answers of any kind: an insight kind's answer, or a table kind's rows as `result` beside their columns. */
export interface SavedInsightAnswer extends InsightAnswer {
  columns?: unknown;
  types?: unknown;
  hasMore?: unknown;
  hogql?: unknown;
}

/**
 * Nodes PostHog saves around a table query (a DataTableNode around an EventsQuery, a
 * DataVisualizationNode around a HogQLQuery): read through to their source, whatever kind of the
 * query API it is.
 */
const TABLE_NODES: ReadonlySet<unknown> = new Set(['DataTableNode', 'DataVisualizationNode']);

/**
 * The query a saved insight runs: its query node (an InsightVizNode read through to its source)
 * when that is an insight kind, or a table node's source the query API runs, else its legacy
 * `filters` by their `insight` (TRENDS when absent) when they have a series. Null: nothing to run
 * (the insight's result is null).
 */
export function parseSavedInsightQuery(row: { filters: Record<string, unknown> | null; query: unknown }): ParsedQuery | null {
  let node = row.query;
  if (isJsonObject(node) && TABLE_NODES.has(node['kind'])) {
    const source = node['source'];
    if (!isJsonObject(source) || !isQueryKind(source['kind']) || !runnerOf(source['kind']).queryApi) return null;
    return { kind: source['kind'], query: runnerOf(source['kind']).queryApi!.parse(source, null) } as ParsedQuery;
  }
  if (isJsonObject(node) && node['kind'] === 'InsightVizNode') node = node['source'];
  if (isJsonObject(node) && isQueryKind(node['kind'])) {
    const runner = runnerOf(node['kind']);
    if (runner.legacyInsight && runner.queryApi) return { kind: node['kind'], query: runner.queryApi.parse(node, null) } as ParsedQuery;
  }
  const filters = row.filters ?? {};
  const hasSeries = (Array.isArray(filters['events']) && filters['events'].length > 0) || (Array.isArray(filters['actions']) && filters['actions'].length > 0);
  const insight = filters['insight'] === undefined ? 'TRENDS' : filters['insight'];
  // Retention names its entities in target_entity and returning_entity ($pageview when absent), not in a series; paths none.
  if (!hasSeries && insight !== 'RETENTION' && insight !== 'PATHS') return null;
  // A TRENDS insight shown as stickiness or lifecycle (`shown_as`) runs as that kind.
  const kind = insight === 'TRENDS' ? legacyTrendKind(filters) : (Object.keys(QUERY_RUNNERS) as QueryKind[]).find((k) => runnerOf(k).legacyInsight === insight);
  return kind ? ({ kind, query: runnerOf(kind).parseLegacy(filters) } as ParsedQuery) : null;
}

/**
 * A saved insight's answer from its kind's: an insight kind's as it is; a table kind's rows as
 * `result` with their `columns`, `types`, `hasMore` and `hogql`, as PostHog's insight of a
 * DataTableNode or DataVisualizationNode answers (calculate_for_query_based_insight). An answer the
 * cache did not keep is fresh: computed now.
 */
export function savedInsightAnswer(answer: unknown, timezone: string, nowMs: number): SavedInsightAnswer {
  const a = (isJsonObject(answer) ? answer : {}) as Record<string, unknown>;
  const freshness = {
    is_cached: a['is_cached'] === true,
    last_refresh: typeof a['last_refresh'] === 'string' ? a['last_refresh'] : new Date(nowMs).toISOString(),
    timezone: typeof a['timezone'] === 'string' ? a['timezone'] : timezone,
  };
  if (!('results' in a) || 'result' in a) return { result: a['result'], ...freshness };
  return {
    result: a['results'],
    ...freshness,
    columns: a['columns'] ?? null,
    types: a['types'] ?? null,
    hasMore: a['hasMore'] ?? null,
    hogql: a['hogql'] ?? null,
  };
}
