import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import type { QueryService } from '@sightline/insights';
import { asValidationError, insightBody, insightQueryInput } from '../http/insight-request';
import { RouteTable } from '../http/route-registry';
import { pathActorsBody } from './persons-path-bodies';
import { legacyActorsAnswer } from './persons-funnel.serializer';
import type { PersonsFunnelDeps } from './persons-funnel.route';

const read = { scope: 'person:read', throttle: 'clickhouse' } as const;

async function pathActors(deps: PersonsFunnelDeps, queries: QueryService, req: Request, input: Record<string, unknown>) {
  try {
    const answer = await queries.runLegacy('PathsActorsQuery', req.project!, input, deps.now());
    return legacyActorsAnswer(req, answer, deps.now(), { offset: 'offset', limit: 'limit' });
  } catch (error) {
    throw asValidationError(error);
  }
}

/**
 * PostHog's legacy `GET|POST persons/path/` (ee/clickhouse/views/person.py `path`): the paths
 * filter with `path_start_key` / `path_end_key` (an edge) or `path_dropoff_key`, `limit` and
 * `offset`, answered as `{results: [{people, count}], next, initial, missing_persons, …}`.
 */
export function createPersonsPathRoutes(deps: PersonsFunnelDeps, queries: QueryService): RouteTable {
  const routes = new RouteTable();
  routes.inProject((project) => {
    const path = '/persons/path';
    project.get(path, { ...read, summary: 'The persons on a paths edge (legacy)' }, async (req, res) => {
      await sendJson(res, await pathActors(deps, queries, req, insightQueryInput(req)));
    });
    const post = {
      ...read,
      summary: 'The persons on a paths edge (legacy, body)',
      body: pathActorsBody,
      example: () => ({ insight: 'PATHS', include_event_types: ['$pageview'], path_start_key: '1_/', path_end_key: '2_/pricing' }),
    };
    project.post(path, post, async (req, res) => {
      await sendJson(res, await pathActors(deps, queries, req, { ...insightQueryInput(req), ...insightBody(req) }));
    });
  });
  return routes;
}
