import type { Request } from 'express';
import { errors, sendJson } from '@sightline/http';
import {
  funnelsQueryToFilter,
  isFunnelCorrelationActorsQuery,
  isFunnelsActorsQuery,
  parseCorrelationActorsQuery,
  parseFunnelActorsPage,
  parseFunnelActorsRequest,
  parseFunnelFilter,
  parseTrendFilter,
  trendsQueryToFilter,
  type TrendsService,
} from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { RouteTable } from '../http/route-registry';
import { describedBody } from '../http/body-fields';
import { asValidationError, insightBody, truthy } from '../http/insight-request';

export interface QueryDeps {
  db: Sql;
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
 * PostHog's query API: `POST /api/environments/:project_id/query/` with `{"query": {...}}`. A
 * TrendsQuery or FunnelsQuery (bare or inside an InsightVizNode) runs on the same engines as the
 * legacy insight endpoints; the answer is PostHog's query response (`results`, `is_cached`,
 * `last_refresh`, `timezone`, `resolved_date_range`).
 */
export function createQueryRoutes(deps: QueryDeps, service: TrendsService): RouteTable {
  const routes = new RouteTable();
  const run = async (req: Request) => {
    const body = insightBody(req);
    const query = queryNode(body);
    const refresh = truthy(body['refresh']) || body['refresh'] === 'blocking' || body['refresh'] === 'force_blocking';
    try {
      if (query['kind'] === 'TrendsQuery') {
        const filter = parseTrendFilter(trendsQueryToFilter(query));
        const answer = filter.series.length
          ? await service.run(req.project!, filter, deps.now(), { refresh })
          : { result: [], timezone: req.project!.timezone, is_cached: false, last_refresh: new Date(deps.now()).toISOString() };
        const first = answer.result[0]?.filter as { date_from?: string; date_to?: string } | undefined;
        return {
          results: answer.result,
          is_cached: answer.is_cached,
          last_refresh: answer.last_refresh,
          timezone: answer.timezone,
          resolved_date_range: { date_from: first?.date_from ?? null, date_to: first?.date_to ?? null },
          timings: [],
          hogql: null,
          modifiers: {},
        };
      }
      if (query['kind'] === 'FunnelsQuery') {
        const filter = parseFunnelFilter(funnelsQueryToFilter(query));
        const answer = await service.runFunnel(req.project!, filter, deps.now(), { refresh });
        return {
          results: answer.result,
          is_cached: answer.is_cached,
          last_refresh: answer.last_refresh,
          timezone: answer.timezone,
          timings: [],
          hogql: null,
          modifiers: {},
        };
      }
      // The persons behind a funnel step: an ActorsQuery over a FunnelsActorsQuery, or the FunnelsActorsQuery itself.
      const actorsSource = query['kind'] === 'ActorsQuery' ? query['source'] : query;
      // The persons behind a correlation row: likewise over a FunnelCorrelationActorsQuery.
      if (isFunnelCorrelationActorsQuery(actorsSource)) {
        const parsed = parseCorrelationActorsQuery(actorsSource, actorsSource === query ? null : query);
        const answer = await service.runCorrelationActors(req.project!, parseFunnelFilter(parsed.funnelBody), parsed.request, parsed.page, deps.now());
        return {
          ...answer,
          is_cached: false,
          last_refresh: new Date(deps.now()).toISOString(),
          timezone: req.project!.timezone,
          timings: [],
          hogql: null,
          modifiers: {},
        };
      }
      if (isFunnelsActorsQuery(actorsSource)) {
        const funnel = actorsSource['source'];
        if (!isJsonObject(funnel) || funnel['kind'] !== 'FunnelsQuery') {
          throw errors.validation('A FunnelsActorsQuery needs its FunnelsQuery as source.', 'query__source', 'required');
        }
        const filter = parseFunnelFilter(funnelsQueryToFilter(funnel));
        const attr = actorsSource === query ? 'query' : 'query__source';
        const answer = await service.runFunnelActors(
          req.project!,
          filter,
          parseFunnelActorsRequest(actorsSource, attr),
          parseFunnelActorsPage(actorsSource === query ? {} : query),
          deps.now(),
        );
        return {
          ...answer,
          is_cached: false,
          last_refresh: new Date(deps.now()).toISOString(),
          timezone: req.project!.timezone,
          timings: [],
          hogql: null,
          modifiers: {},
        };
      }
    } catch (error) {
      throw asValidationError(error);
    }
    throw errors.validation(
      `Queries of kind "${String(query['kind']).slice(0, 60)}" are not supported (TrendsQuery, FunnelsQuery, ActorsQuery of a FunnelsActorsQuery or FunnelCorrelationActorsQuery).`,
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
