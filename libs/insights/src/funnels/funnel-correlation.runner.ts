import type { QueryRunner } from '../runners/query-runner';
import { funnelBodyOf, parseCorrelationOptions, runFunnelCorrelation, type CorrelationOptions, type CorrelationResult } from './funnel-correlation';
import { parseFunnelFilter, type ParsedFunnelFilter } from './funnel-filter';
import { funnelReferences } from './funnel-references';

/** A funnel and what to correlate its outcome with. */
export interface FunnelCorrelationRequest {
  funnel: ParsedFunnelFilter;
  correlation: CorrelationOptions;
}

/**
 * FunnelCorrelationQuery, through the legacy insights/funnel/correlation/ route: the funnel at
 * the top level, in `filters`, or as a `query` node. The query API does not take it yet.
 */
export const funnelCorrelationRunner: QueryRunner<FunnelCorrelationRequest, CorrelationResult> = {
  label: 'correlation',
  parseLegacy: (input) => {
    const body = funnelBodyOf(input);
    return { funnel: parseFunnelFilter(body), correlation: parseCorrelationOptions(body) };
  },
  references: ({ funnel }) => funnelReferences(funnel),
  cacheKey: ({ funnel: { request: _request, ...normalised }, correlation }) => ({ normalised, correlation }),
  calculate: ({ ch, project, ports, nowMs }, { funnel, correlation }) => runFunnelCorrelation(ch, project, funnel, correlation, nowMs, ports),
};
