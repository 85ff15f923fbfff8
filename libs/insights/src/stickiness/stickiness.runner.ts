import type { QueryRunner } from '../runners/query-runner';
import { parseStickinessFilter, stickinessQueryToFilter, type ParsedStickinessFilter } from './stickiness-filter';
import { runStickinessQuery, type StickinessResult } from './stickiness.query';

/** StickinessQuery, and the legacy insights/trend/ filter with `shown_as: "Stickiness"` (insight STICKINESS). */
export const stickinessRunner: QueryRunner<ParsedStickinessFilter, StickinessResult> = {
  legacyInsight: 'STICKINESS',
  label: 'stickiness',
  parseLegacy: (input) => parseStickinessFilter(input),
  references: (filter) => ({ series: filter.series, properties: filter.properties, breakdowns: [], filterTestAccounts: filter.filter_test_accounts }),
  cacheKey: ({ request: _request, ...normalised }) => normalised,
  // No series, no bars: PostHog's runner answers an empty list without a query.
  shortcut: (filter, project, nowMs) =>
    filter.series.length === 0 ? { result: [], next: null, timezone: project.timezone, is_cached: false, last_refresh: new Date(nowMs).toISOString() } : null,
  calculate: ({ ch, project, ports, nowMs }, filter) => runStickinessQuery(ch, project, filter, nowMs, ports),
  queryApi: {
    parse: (node) => parseStickinessFilter(stickinessQueryToFilter(node)),
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
