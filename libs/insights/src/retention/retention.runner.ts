import type { QueryRunner } from '../runners/query-runner';
import { parseRetentionFilter, retentionQueryToFilter, type ParsedRetentionFilter } from './retention-filter';
import { retentionReferences } from './retention-references';
import { runRetentionQuery, type RetentionResult } from './retention.query';

/** RetentionQuery, and the legacy insights/retention/ filter (posthog/hogql_queries/insights/retention_query_runner.py). */
export const retentionRunner: QueryRunner<ParsedRetentionFilter, RetentionResult> = {
  legacyInsight: 'RETENTION',
  label: 'retention',
  parseLegacy: (input) => parseRetentionFilter(input),
  references: retentionReferences,
  cacheKey: (filter) => filter,
  calculate: ({ ch, project, ports, nowMs }, filter) => runRetentionQuery(ch, project, filter, nowMs, ports),
  queryApi: {
    parse: (node) => parseRetentionFilter(retentionQueryToFilter(node)),
    response: (answer) => ({
      results: answer.result,
      is_cached: answer.is_cached,
      last_refresh: answer.last_refresh,
      timezone: answer.timezone,
      timings: [],
      hogql: null,
      modifiers: {},
    }),
  },
};
