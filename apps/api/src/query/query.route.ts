import type { Request } from 'express';
import { errors, sendChunks, sendJson } from '@sightline/http';
import { QUERY_API_KINDS, type QueryService } from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import { RouteTable } from '../http/route-registry';
import { describedBody } from '../http/body-fields';
import { asValidationError, insightBody, truthy } from '../http/insight-request';
import { isRowsAnswer, rowsCsvSlices } from './query-csv';

export interface QueryDeps {
  now: () => number;
}

/** What a query request reads; `query` is the one field it needs (a body that is no object has none). */
const queryBody = {
  ...describedBody('A query request', {
    query: 'The query node: {kind: TrendsQuery | FunnelsQuery | ActorsQuery | …}, or its JSON text',
    refresh: 'true, blocking or force_blocking: compute again instead of answering from the cache',
    client_query_id: 'An id the client gives the query',
    format: 'csv: the rows of the answer as CSV (kinds that answer columns and results); also as ?format=csv',
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

/** The answer's format: `csv` in the query string or the body (as PostHog's exports ask), else JSON. */
function answerFormat(req: Request, body: Record<string, unknown>): 'csv' | 'json' {
  const asked = req.query['format'] ?? body['format'];
  if (asked === undefined || asked === null || asked === 'json') return 'json';
  if (asked === 'csv') return 'csv';
  throw errors.validation('format must be json or csv.', 'format', 'invalid_choice');
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
    const format = answerFormat(req, body);
    const query = queryNode(body);
    const refresh = truthy(body['refresh']) || body['refresh'] === 'blocking' || body['refresh'] === 'force_blocking';
    let response: Record<string, unknown> | null;
    try {
      response = await queries.runNode(req.project!, query, deps.now(), { refresh });
    } catch (error) {
      throw asValidationError(error);
    }
    if (response && format === 'csv' && !isRowsAnswer(response)) {
      throw errors.validation(
        `Queries of kind "${String(query['kind']).slice(0, 60)}" do not answer rows; format=csv takes the kinds that answer columns and results (EventsQuery, HogQLQuery, ActorsQuery).`,
        'format',
        'not_supported',
      );
    }
    if (response) return { response, format };
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
        summary:
          'Run a TrendsQuery, FunnelsQuery, EventsQuery, or ActorsQuery of a FunnelsActorsQuery or FunnelCorrelationActorsQuery (format=csv: rows as CSV)',
        query: [{ name: 'format', description: 'csv: the rows of the answer as CSV (kinds that answer columns and results)', example: 'csv' }],
        body: queryBody,
        throttle: 'clickhouse',
        example: () => ({ query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signup' }] } }),
      },
      async (req, res) => {
        const { response, format } = await run(req);
        if (format === 'json' || !isRowsAnswer(response)) return sendJson(res, response);
        res.type('text/csv; charset=utf-8');
        await sendChunks(res, rowsCsvSlices(response));
      },
    );
  });
  return routes;
}
