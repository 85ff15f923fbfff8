import type { QueryReferences, QueryRunner } from '../runners/query-runner';
import { parsePathsFilter, type ParsedPathsFilter } from './paths-filter';
import { pathsQueryToFilter } from './paths-query-node';
import { runPathsQuery, type PathsResult } from './paths.query';

/** What a paths query names: no series, its filters and its HogQL path expression when it uses one. */
export const pathsReferences = (filter: ParsedPathsFilter): QueryReferences => ({
  series: [],
  properties: filter.properties,
  breakdowns: [],
  hogql:
    filter.pathsHogQLExpression && (filter.includeEventTypes.length === 0 || filter.includeEventTypes.includes('hogql'))
      ? [{ text: filter.pathsHogQLExpression, attr: 'paths_hogql_expression' }]
      : [],
  filterTestAccounts: filter.filter_test_accounts,
});

/** PathsQuery, and the legacy insights/path/ filter (insight PATHS). */
export const pathsRunner: QueryRunner<ParsedPathsFilter, PathsResult> = {
  legacyInsight: 'PATHS',
  label: 'paths',
  parseLegacy: (input) => parsePathsFilter(input),
  references: pathsReferences,
  cacheKey: (filter) => filter,
  calculate: ({ ch, project, ports, nowMs }, filter) => runPathsQuery(ch, project, filter, nowMs, ports),
  queryApi: {
    parse: (node) => parsePathsFilter(pathsQueryToFilter(node)),
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
