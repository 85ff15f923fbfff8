import type { Request } from 'express';
import { errors, sendJson } from '@sightline/http';
import { QUERY_API_KINDS, type QueryService } from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import { RouteTable } from '../http/route-registry';
import { describedBody } from '../http/body-fields';
import { asValidationError, insightBody, truthy } from '../http/insight-request';

export interface QueryDeps {
  now: () => number;
}

/** What a query request reads; `query` is the one field it needs (a body that is no object has none). */
const queryBody = {
  ...describedBody('A query request', {
    query: 'The query node: {kind: TrendsQuery | FunnelsQuery | ActorsQuery | …}, or its JSON text',
    refresh: 'true, blocking or force_blocking: compute again instead of answering from the cache',
    client_query_id: 'An id the client gives the query',
  }),
  required: ['query'],
};

/** The query node of a request: `query` as an object or a JSON string; an InsightVizNode is unwrapped. */
function queryNode(body: Record<string, unknown>): Record<string, unknown> {
  let query = body['query'];
  if (typeof query === 'string') {
    try {
      query = JSON.parse(query) as unknown;
    } catch {
      throw errors.validation('query is not valid JSON.', 'query', 'parse_error');
    }
  }
  if (isJsonObject(query) && query['kind'] === 'InsightVizNode') query = query['source'];
  if (!isJsonObject(query)) throw errors.validation('This field is required.', 'query', 'required');
  return query;
}

/**
 * PostHog's query API: `POST /api/environments/:project_id/query/` with `{"query": {...}}`. The
 * node (bare or inside an InsightVizNode) is run by its kind's runner (QUERY_API_KINDS; the
 * actors kinds also as an ActorsQuery's source), through the same service and answer cache as
 * the legacy insight endpoints; the answer is PostHog's query response for that kind.
 */
export function createQueryRoutes(deps: QueryDeps, queries: QueryService): RouteTable {
  const routes = new RouteTable();
  const run = async (req: Request) => {
    const body = insightBody(req);
    const query = queryNode(body);
    const refresh = truthy(body['refresh']) || body['refresh'] === 'blocking' || body['refresh'] === 'force_blocking';
    let response: Record<string, unknown> | null;
    try {
      response = await queries.runNode(req.project!, query, deps.now(), { refresh });
    } catch (error) {
      throw asValidationError(error);
    }
    if (response) return response;
    throw errors.validation(
      `Queries of kind "${String(query['kind']).slice(0, 60)}" are not supported (${QUERY_API_KINDS.join(', ')}; the actors kinds also as an ActorsQuery's source).`,
      'query',
      'not_supported',
    );
  };
  routes.inProject((project) => {
    project.post(
      '/query',
      {
        scope: 'query:read',
        summary: 'Run a TrendsQuery, FunnelsQuery, or ActorsQuery of a FunnelsActorsQuery or FunnelCorrelationActorsQuery',
        body: queryBody,
        throttle: 'clickhouse',
        example: () => ({ query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signup' }] } }),
      },
      async (req, res) => {
        await sendJson(res, await run(req));
      },
    );
  });
  return routes;
}
