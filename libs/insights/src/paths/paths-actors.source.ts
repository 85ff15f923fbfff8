import { isJsonObject } from '@sightline/json-input';
import { QueryFilterError } from '../common/query-filter-error';
import { parseFunnelActorsPage } from '../funnels/funnel-actors';
import type { InsightActorsSource } from '../insight-actors/insight-actors-source';
import { parsePathsActorsKeys, parsePathsFilter } from './paths-filter';
import { pathsQueryToFilter } from './paths-query-node';
import { runPathsActorsQuery, type PathsActorsQuery } from './paths-actors';
import { pathsReferences } from './paths.runner';

/** The persons on a paths edge: an InsightActorsQuery whose source is a PathsQuery naming the edge in its pathsFilter. */
export const pathsActorsSource: InsightActorsSource<PathsActorsQuery> = {
  parse(node, outer) {
    const source = node['source'] as Record<string, unknown>;
    const prefix = outer === null ? 'query__source__' : 'query__source__source__';
    const pathsFilter = isJsonObject(source['pathsFilter']) ? source['pathsFilter'] : {};
    const page = parseFunnelActorsPage(outer ?? {});
    // Searching a page of path persons is not served: refused rather than answered unfiltered.
    if (page.search !== null) throw new QueryFilterError('query__search', 'search is not served for the persons of a path.', 'not_supported');
    return {
      paths: parsePathsFilter(pathsQueryToFilter(source)),
      keys: parsePathsActorsKeys(pathsFilter, false, `${prefix}pathsFilter__`),
      page,
    };
  },
  references: ({ paths }) => pathsReferences(paths),
  calculate: ({ ch, db, project, ports, nowMs }, query) => runPathsActorsQuery({ ch, db }, project, query, nowMs, ports),
};
