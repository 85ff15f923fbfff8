import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import type { QueryService, RetentionResult } from '@sightline/insights';
import { RouteTable } from '../http/route-registry';
import { asValidationError, insightBody, insightQueryInput, truthy } from '../http/insight-request';
import { retentionFilterBody, RETENTION_EXAMPLE } from './retention-bodies';
import { serializeLegacyRetention } from './retention.serializer';
import type { InsightsDeps } from './trend.route';

/**
 * PostHog's legacy retention endpoint (posthog/api/insight.py `retention`) under both prefixes;
 * GET takes the filter as query parameters. Run by the RetentionQuery runner, each row carries
 * the people_url of its actors (persons/retention/).
 */
export function createRetentionRoutes(deps: InsightsDeps, queries: QueryService): RouteTable {
  const routes = new RouteTable();
  const retention = async (req: Request, input: Record<string, unknown>) => {
    let answer: RetentionResult;
    try {
      answer = await queries.runLegacy('RetentionQuery', req.project!, input, deps.now(), {
        refresh: truthy(input['refresh']) || truthy(req.query['refresh']),
      });
    } catch (error) {
      throw asValidationError(error);
    }
    return serializeLegacyRetention(req, input, answer);
  };
  routes.inProject((project) => {
    const path = '/insights/retention';
    project.post(
      path,
      { scope: 'insight:read', summary: 'Retention (body)', body: retentionFilterBody, throttle: 'clickhouse', example: () => RETENTION_EXAMPLE },
      async (req, res) => {
        await sendJson(res, await retention(req, insightBody(req)));
      },
    );
    project.get(path, { scope: 'insight:read', summary: 'Retention (query parameters)', throttle: 'clickhouse' }, async (req, res) => {
      await sendJson(res, await retention(req, insightQueryInput(req)));
    });
  });
  return routes;
}
