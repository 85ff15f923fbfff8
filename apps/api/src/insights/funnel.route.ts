import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import { funnelBodyOf, parseCorrelationOptions, parseFunnelFilter, type CorrelationResult, type FunnelResult, type TrendsService } from '@sightline/insights';
import { RouteTable } from '../http/route-registry';
import { asValidationError, insightBody, insightQueryInput, truthy } from '../http/insight-request';
import type { InsightsDeps } from './trend.route';

/** PostHog's legacy funnel endpoint under both prefixes; GET takes the filter as query parameters. */
export function createFunnelRoutes(deps: InsightsDeps, service: TrendsService): RouteTable {
  const routes = new RouteTable();
  const funnel = async (req: Request, input: Record<string, unknown>): Promise<FunnelResult> => {
    try {
      const filter = parseFunnelFilter(input);
      return await service.runFunnel(req.project!, filter, deps.now(), { refresh: truthy(input['refresh']) || truthy(req.query['refresh']) });
    } catch (error) {
      throw asValidationError(error);
    }
  };
  /** Funnel correlation: the funnel at the top level, in `filters`, or as a `query` node; no steps answers no events. */
  const correlation = async (req: Request, input: Record<string, unknown>): Promise<CorrelationResult> => {
    try {
      const body = funnelBodyOf(input);
      const filter = parseFunnelFilter(body);
      const options = parseCorrelationOptions(body);
      return await service.runCorrelation(req.project!, filter, options, deps.now(), { refresh: truthy(input['refresh']) || truthy(req.query['refresh']) });
    } catch (error) {
      throw asValidationError(error);
    }
  };
  for (const prefix of ['/api/environments/:project_id', '/api/projects/:project_id']) {
    const correlationPath = `${prefix}/insights/funnel/correlation`;
    routes.post(
      correlationPath,
      {
        scope: 'insight:read',
        summary: 'Funnel correlation (body)',
        throttle: 'clickhouse',
        example: () => ({ insight: 'FUNNELS', events: [{ id: 'signup' }, { id: 'purchase' }] }),
      },
      async (req, res) => {
        await sendJson(res, await correlation(req, insightBody(req)));
      },
    );
    routes.get(correlationPath, { scope: 'insight:read', summary: 'Funnel correlation (query parameters)', throttle: 'clickhouse' }, async (req, res) => {
      await sendJson(res, await correlation(req, insightQueryInput(req)));
    });
    const path = `${prefix}/insights/funnel`;
    routes.post(
      path,
      {
        scope: 'insight:read',
        summary: 'Funnel (body)',
        throttle: 'clickhouse',
        example: () => ({ insight: 'FUNNELS', events: [{ id: 'signup' }, { id: 'purchase' }] }),
      },
      async (req, res) => {
        await sendJson(res, await funnel(req, insightBody(req)));
      },
    );
    routes.get(path, { scope: 'insight:read', summary: 'Funnel (query parameters)', throttle: 'clickhouse' }, async (req, res) => {
      await sendJson(res, await funnel(req, insightQueryInput(req)));
    });
  }
  return routes;
}
