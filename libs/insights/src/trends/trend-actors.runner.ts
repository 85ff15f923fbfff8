import { actorsQueryResponse } from '../funnels/funnel-actors-response';
import type { FunnelActorsResult } from '../funnels/funnel-actors';
import type { QueryRunner } from '../runners/query-runner';
import { parseTrendActorsRequest, runTrendActorsQuery, trendsSourceOf, type TrendActorsRequest } from './trend-actors';
import { parseTrendFilter, type ParsedTrendFilter } from './trend-filter';
import { trendsQueryToFilter } from './trends-query-node';

/** The actors asked of a trend: one point (series, bucket, breakdown value, period) and a page. */
export interface TrendActorsQuery {
  trend: ParsedTrendFilter;
  request: TrendActorsRequest;
  /** Where an error about the point's fields points (`query__` or `query__source__`). */
  prefix: string;
}

/**
 * PostHog's InsightActorsQuery over a TrendsQuery (bare or as an ActorsQuery's source): the actors
 * behind one point of a trend, ordered by id. Pages are not cached.
 */
export const trendActorsRunner: QueryRunner<TrendActorsQuery, FunnelActorsResult> = {
  label: 'trend_actors',
  parseLegacy: (input) => ({
    trend: parseTrendFilter(input),
    request: parseTrendActorsRequest(
      { series: input['series'], day: input['day'], breakdown: input['breakdown_value'] ?? null, compare: input['compare_label'] ?? null },
      { limit: input['limit'], offset: input['offset'] },
      '',
    ),
    prefix: '',
  }),
  references: ({ trend }) => ({ ...trend, filterTestAccounts: trend.filter_test_accounts }),
  calculate: ({ ch, db, project, ports, nowMs }, { trend, request, prefix }) => runTrendActorsQuery({ ch, db }, project, trend, request, nowMs, ports, prefix),
  queryApi: {
    insightActorsOf: 'TrendsQuery',
    parse: (node, outer) => {
      const prefix = outer === null ? 'query__' : 'query__source__';
      const trend = parseTrendFilter(trendsQueryToFilter(trendsSourceOf(node, prefix)));
      return { trend, request: parseTrendActorsRequest(node, outer, prefix), prefix };
    },
    actorsSource: true,
    response: actorsQueryResponse,
  },
};
