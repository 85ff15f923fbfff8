import type { QueryRunner } from '../runners/query-runner';
import { parseFunnelFilter, type ParsedFunnelFilter } from './funnel-filter';
import { funnelReferences } from './funnel-references';
import { runFunnelQuery, type FunnelResult } from './funnels.query';
import { funnelsQueryToFilter } from './funnels-query-node';

/** FunnelsQuery, and the legacy insights/funnel/ filter. */
export const funnelsRunner: QueryRunner<ParsedFunnelFilter, FunnelResult> = {
  legacyInsight: 'FUNNELS',
  label: 'funnel',
  parseLegacy: (input) => parseFunnelFilter(input),
  references: funnelReferences,
  cacheKey: ({ request: _request, ...normalised }) => normalised,
  calculate: ({ ch, project, ports, nowMs }, filter) => runFunnelQuery(ch, project, filter, nowMs, ports),
  queryApi: {
    parse: (node) => parseFunnelFilter(funnelsQueryToFilter(node)),
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
