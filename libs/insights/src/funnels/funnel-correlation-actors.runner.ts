import type { QueryRunner } from '../runners/query-runner';
import type { FunnelActorsPage, FunnelActorsResult } from './funnel-actors';
import { actorsQueryResponse } from './funnel-actors-response';
import {
  parseCorrelationActorsQuery,
  parseLegacyCorrelationActors,
  runCorrelationActorsQuery,
  type CorrelationActorsRequest,
  type ParsedCorrelationActorsQuery,
} from './funnel-correlation-actors';
import { parseFunnelFilter, type ParsedFunnelFilter } from './funnel-filter';
import { funnelReferences } from './funnel-references';

/** The actors asked of a correlation row: the funnel, the row and a page. */
export interface CorrelationActorsQuery {
  funnel: ParsedFunnelFilter;
  request: CorrelationActorsRequest;
  page: FunnelActorsPage;
}

const withFunnel = ({ funnelBody, request, page }: ParsedCorrelationActorsQuery): CorrelationActorsQuery => ({
  funnel: parseFunnelFilter(funnelBody),
  request,
  page,
});

/**
 * FunnelCorrelationActorsQuery (in an ActorsQuery, or bare), and the legacy
 * persons/funnel/correlation/ filter: a page of the actors behind a correlation row. Pages are
 * not cached.
 */
export const funnelCorrelationActorsRunner: QueryRunner<CorrelationActorsQuery, FunnelActorsResult> = {
  label: 'correlation_actors',
  parseLegacy: (input) => withFunnel(parseLegacyCorrelationActors(input)),
  references: ({ funnel }) => funnelReferences(funnel),
  calculate: ({ ch, db, project, ports, nowMs }, { funnel, request, page }) =>
    runCorrelationActorsQuery({ ch, db }, project, funnel, request, page, nowMs, ports),
  queryApi: { parse: (node, outer) => withFunnel(parseCorrelationActorsQuery(node, outer)), actorsSource: true, response: actorsQueryResponse },
};
