import { isJsonObject } from '@sightline/json-input';
import { QueryFilterError } from '../common/query-filter-error';
import type { FunnelActorsResult } from '../funnels/funnel-actors';
import { actorsQueryResponse } from '../funnels/funnel-actors-response';
import type { QueryRunner } from '../runners/query-runner';
import { INSIGHT_ACTOR_SOURCES } from './insight-actor-sources';
import type { InsightActorsSource } from './insight-actors-source';

/** An InsightActorsQuery parsed by the kind of its source. */
export interface InsightActorsQuery {
  sourceKind: string;
  query: unknown;
}

const sourceOf = (kind: string): InsightActorsSource<unknown> =>
  INSIGHT_ACTOR_SOURCES[kind as keyof typeof INSIGHT_ACTOR_SOURCES] as InsightActorsSource<unknown>;

/**
 * PostHog's InsightActorsQuery (posthog/hogql_queries/insights/insight_actors_query_runner.py): the
 * actors behind one part of an insight (a paths edge, …), bare or as an ActorsQuery's source. Its
 * source's kind decides how (INSIGHT_ACTOR_SOURCES). Pages are not cached.
 */
export const insightActorsRunner: QueryRunner<InsightActorsQuery, FunnelActorsResult> = {
  label: 'insight_actors',
  parseLegacy: () => {
    throw new QueryFilterError('kind', 'InsightActorsQuery is a query node, not a legacy filter.', 'not_supported');
  },
  references: ({ sourceKind, query }) => sourceOf(sourceKind).references(query),
  calculate: (context, { sourceKind, query }) => sourceOf(sourceKind).calculate(context, query),
  queryApi: {
    parse: (node, outer) => {
      const source = node['source'];
      const kind = isJsonObject(source) ? source['kind'] : undefined;
      if (typeof kind !== 'string' || !Object.hasOwn(INSIGHT_ACTOR_SOURCES, kind)) {
        throw new QueryFilterError(
          outer === null ? 'query__source' : 'query__source__source',
          `An InsightActorsQuery's source must be one of: ${Object.keys(INSIGHT_ACTOR_SOURCES).join(', ')}.`,
          'not_supported',
        );
      }
      return { sourceKind: kind, query: sourceOf(kind).parse(node, outer) };
    },
    actorsSource: true,
    response: actorsQueryResponse,
  },
};
