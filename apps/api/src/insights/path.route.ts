import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import type { PathsResult, QueryService } from '@sightline/insights';
import { RouteTable } from '../http/route-registry';
import { asValidationError, insightBody, insightQueryInput, truthy } from '../http/insight-request';
import { pathFilterBody } from './path-bodies';
import type { InsightsDeps } from './trend.route';

/** PostHog's legacy paths endpoint (posthog/api/insight.py `path`) under both prefixes; GET takes the filter as query parameters. */
export function createPathRoutes(deps: InsightsDeps, queries: QueryService): RouteTable {
  const routes = new RouteTable();
  const paths = async (req: Request, input: Record<string, unknown>): Promise<PathsResult & { timings: [] }> => {
    try {
      const refresh = truthy(input['refresh']) || truthy(req.query['refresh']);
      return { ...(await queries.runLegacy('PathsQuery', req.project!, input, deps.now(), { refresh })), timings: [] };
    } catch (error) {
      throw asValidationError(error);
    }
  };
  routes.inProject((project) => {
    const path = '/insights/path';
    project.post(
      path,
      {
        scope: 'insight:read',
        summary: 'Paths (body)',
        body: pathFilterBody,
        throttle: 'clickhouse',
        example: () => ({ insight: 'PATHS', include_event_types: ['$pageview'], step_limit: 5 }),
      },
      async (req, res) => {
        await sendJson(res, await paths(req, insightBody(req)));
      },
    );
    project.get(path, { scope: 'insight:read', summary: 'Paths (query parameters)', throttle: 'clickhouse' }, async (req, res) => {
      await sendJson(res, await paths(req, insightQueryInput(req)));
    });
  });
  return routes;
}
