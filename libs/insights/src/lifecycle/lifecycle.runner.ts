import type { QueryRunner } from '../runners/query-runner';
import { lifecycleQueryToFilter, parseLifecycleFilter, type ParsedLifecycleFilter } from './lifecycle-filter';
import { runLifecycleQuery, type LifecycleResult } from './lifecycle.query';

/** LifecycleQuery, and the legacy insights/trend/ filter with `shown_as: "Lifecycle"` (insight LIFECYCLE). */
export const lifecycleRunner: QueryRunner<ParsedLifecycleFilter, LifecycleResult> = {
  legacyInsight: 'LIFECYCLE',
  label: 'lifecycle',
  parseLegacy: (input) => parseLifecycleFilter(input),
  references: (filter) => ({ series: filter.series, properties: filter.properties, breakdowns: [], filterTestAccounts: filter.filter_test_accounts }),
  cacheKey: ({ request: _request, ...normalised }) => normalised,
  calculate: ({ ch, project, ports, nowMs }, filter) => runLifecycleQuery(ch, project, filter, nowMs, ports),
  queryApi: {
    parse: (node) => parseLifecycleFilter(lifecycleQueryToFilter(node)),
    response: (answer) => ({
      results: answer.result,
      is_cached: answer.is_cached,
      last_refresh: answer.last_refresh,
      timezone: answer.timezone,
      resolved_date_range: answer.resolved_date_range,
      timings: [],
      hogql: null,
      modifiers: {},
    }),
  },
};
