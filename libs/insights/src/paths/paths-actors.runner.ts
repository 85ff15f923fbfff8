import { isJsonObject } from '@sightline/json-input';
import { QueryFilterError } from '../common/query-filter-error';
import { parseFunnelActorsPage, type FunnelActorsResult } from '../funnels/funnel-actors';
import { actorsQueryResponse } from '../funnels/funnel-actors-response';
import type { QueryRunner } from '../runners/query-runner';
import { runPathsActorsQuery, type PathsActorsQuery } from './paths-actors';
import { parsePathsActorsKeys, parsePathsFilter } from './paths-filter';
import { pathsQueryToFilter } from './paths-query-node';
import { pathsReferences } from './paths.runner';

/** Searching a page of path persons is not served: refused rather than answered unfiltered. */
function refuseSearch(search: string | null, attr: string): void {
  if (search !== null) throw new QueryFilterError(attr, 'search is not served for the persons of a path.', 'not_supported');
}

/**
 * PostHog's InsightActorsQuery over a PathsQuery (bare or in an ActorsQuery), and the legacy
 * persons/path/ filter: the persons on an edge (pathStartKey → pathEndKey) or dropping off at a
 * step (pathDropoffKey), a page of them by person id. Pages are not cached.
 */
export const pathsActorsRunner: QueryRunner<PathsActorsQuery, FunnelActorsResult> = {
  label: 'paths_actors',
  parseLegacy: (input) => {
    const page = parseFunnelActorsPage(
      { limit: input['limit'] === undefined ? undefined : Number(input['limit']), offset: input['offset'] === undefined ? undefined : Number(input['offset']) },
      '',
    );
    return { paths: parsePathsFilter(input), keys: parsePathsActorsKeys(input, true), page: { ...page, select: ['actor'] } };
  },
  references: ({ paths }) => pathsReferences(paths),
  calculate: ({ ch, db, project, ports, nowMs }, query) => runPathsActorsQuery({ ch, db }, project, query, nowMs, ports),
  queryApi: {
    insightActorsOf: 'PathsQuery',
    parse: (node, outer) => {
      const source = node['source'];
      const prefix = outer === null ? 'query__' : 'query__source__';
      if (!isJsonObject(source) || source['kind'] !== 'PathsQuery') {
        throw new QueryFilterError(`${prefix}source`, 'The persons of a path need its PathsQuery as source.', 'required');
      }
      const page = parseFunnelActorsPage(outer ?? {});
      refuseSearch(page.search, 'query__search');
      const pathsFilter = isJsonObject(source['pathsFilter']) ? source['pathsFilter'] : {};
      return {
        paths: parsePathsFilter(pathsQueryToFilter(source)),
        keys: parsePathsActorsKeys(pathsFilter, false, `${prefix}source__pathsFilter__`),
        page,
      };
    },
    actorsSource: true,
    response: actorsQueryResponse,
  },
};
