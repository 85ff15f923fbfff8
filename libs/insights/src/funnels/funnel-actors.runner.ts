import { isJsonObject } from '@sightline/json-input';
import { QueryFilterError } from '../common/query-filter-error';
import type { QueryRunner } from '../runners/query-runner';
import {
  parseFunnelActorsPage,
  parseFunnelActorsRequest,
  parseLegacyFunnelActors,
  runFunnelActorsQuery,
  type FunnelActorsPage,
  type FunnelActorsRequest,
  type FunnelActorsResult,
} from './funnel-actors';
import { actorsQueryResponse } from './funnel-actors-response';
import { parseFunnelFilter, type ParsedFunnelFilter } from './funnel-filter';
import { funnelReferences } from './funnel-references';
import { funnelsQueryToFilter } from './funnels-query-node';

/** The actors asked of a funnel: a step (or trend period) and a page. */
export interface FunnelActorsQuery {
  funnel: ParsedFunnelFilter;
  request: FunnelActorsRequest;
  page: FunnelActorsPage;
}

/**
 * FunnelsActorsQuery (in an ActorsQuery, or bare), and the legacy persons/funnel/ filter: a page
 * of the actors of a funnel step or funnel trend period. Pages are not cached.
 */
export const funnelActorsRunner: QueryRunner<FunnelActorsQuery, FunnelActorsResult> = {
  label: 'funnel_actors',
  parseLegacy: (input) => {
    const funnel = parseFunnelFilter(input);
    return { funnel, ...parseLegacyFunnelActors(input) };
  },
  references: ({ funnel }) => funnelReferences(funnel),
  calculate: ({ ch, db, project, ports, nowMs }, { funnel, request, page }) => runFunnelActorsQuery({ ch, db }, project, funnel, request, page, nowMs, ports),
  queryApi: {
    parse: (node, outer) => {
      const source = node['source'];
      if (!isJsonObject(source) || source['kind'] !== 'FunnelsQuery') {
        throw new QueryFilterError('query__source', 'A FunnelsActorsQuery needs its FunnelsQuery as source.', 'required');
      }
      const funnel = parseFunnelFilter(funnelsQueryToFilter(source));
      return { funnel, request: parseFunnelActorsRequest(node, outer === null ? 'query' : 'query__source'), page: parseFunnelActorsPage(outer ?? {}) };
    },
    actorsSource: true,
    response: actorsQueryResponse,
  },
};
