import type { QueryRunner } from '../runners/query-runner';
import { parseTrendFilter, type ParsedTrendFilter } from './trend-filter';
import type { TrendResult } from './trend-result';
import { runTrendQuery } from './trends.query';
import { trendsQueryToFilter } from './trends-query-node';

/** TrendsQuery, and the legacy insights/trend/ filter. */
export const trendsRunner: QueryRunner<ParsedTrendFilter, TrendResult> = {
  legacyInsight: 'TRENDS',
  label: 'trend',
  parseLegacy: (input) => parseTrendFilter(input),
  references: (filter) => ({ ...filter, filterTestAccounts: filter.filter_test_accounts }),
  cacheKey: ({ request: _request, ...normalised }) => normalised,
  // A trend without series answers an empty result, as PostHog does, without reading anything.
  shortcut: (filter, project, nowMs) =>
    filter.series.length === 0 ? { result: [], next: null, timezone: project.timezone, is_cached: false, last_refresh: new Date(nowMs).toISOString() } : null,
  calculate: ({ ch, project, ports, nowMs }, filter) => runTrendQuery(ch, project, filter, nowMs, ports),
  queryApi: {
    parse: (node) => parseTrendFilter(trendsQueryToFilter(node)),
    response: (answer) => {
      const first = answer.result[0]?.filter as { date_from?: string; date_to?: string } | undefined;
      return {
        results: answer.result,
        is_cached: answer.is_cached,
        last_refresh: answer.last_refresh,
        timezone: answer.timezone,
        resolved_date_range: { date_from: first?.date_from ?? null, date_to: first?.date_to ?? null },
        timings: [],
        hogql: null,
        modifiers: {},
      };
    },
  },
};
