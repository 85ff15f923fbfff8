import type { QueryRunner } from '../runners/query-runner';
import { parseHogQLQueryNode, runHogQLQuery, type HogQLQueryAnswer, type HogQLQueryInput } from './hogql-query';

/** What a HogQL answer holds besides its rows: whether it came from the cache, and when it was computed. */
export interface HogQLQueryResult extends HogQLQueryAnswer {
  is_cached: boolean;
  last_refresh: string;
}

const NO_REFERENCES = {
  series: [],
  properties: { type: 'AND' as const, values: [] },
  breakdowns: [],
  filterTestAccounts: false,
};

/**
 * HogQLQuery on the query API (PostHog's HogQLQueryRunner, posthog/hogql_queries/hogql_query_runner.py):
 * a SELECT in HogQL over the project's tables, answered as PostHog's HogQLQueryResponse.
 */
export const hogqlQueryRunner: QueryRunner<HogQLQueryInput, HogQLQueryResult> = {
  label: 'hogql',
  parseLegacy: (input) => parseHogQLQueryNode(input),
  references: () => NO_REFERENCES,
  cacheKey: (query) => query,
  calculate: async ({ ch, project, nowMs }, query) => ({
    ...(await runHogQLQuery(ch, project, query)),
    is_cached: false,
    last_refresh: new Date(nowMs).toISOString(),
  }),
  queryApi: {
    parse: (node) => parseHogQLQueryNode(node),
    response: (answer, project) => ({ ...answer, timezone: project.timezone, modifiers: {}, timings: [], query_status: null, error: null }),
  },
};
