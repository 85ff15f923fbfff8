import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import { funnelBodyOf, parseCorrelationOptions, parseFunnelFilter, type CorrelationResult, type FunnelResult, type TrendsService } from '@sightline/insights';
import { RouteTable } from '../http/route-registry';
import { funnelCorrelationBody, funnelFilterBody } from '../http/legacy-filter-body';
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
  routes.inProject((project) => {
    const correlationPath = '/insights/funnel/correlation';
    project.post(
      correlationPath,
      {
        scope: 'insight:read',
        summary: 'Funnel correlation (body)',
        body: funnelCorrelationBody,
        throttle: 'clickhouse',
        example: () => ({ insight: 'FUNNELS', events: [{ id: 'signup' }, { id: 'purchase' }] }),
      },
      async (req, res) => {
        await sendJson(res, await correlation(req, insightBody(req)));
      },
    );
    project.get(correlationPath, { scope: 'insight:read', summary: 'Funnel correlation (query parameters)', throttle: 'clickhouse' }, async (req, res) => {
      await sendJson(res, await correlation(req, insightQueryInput(req)));
    });
    const path = '/insights/funnel';
    project.post(
      path,
      {
        scope: 'insight:read',
        summary: 'Funnel (body)',
        body: funnelFilterBody,
        throttle: 'clickhouse',
        example: () => ({ insight: 'FUNNELS', events: [{ id: 'signup' }, { id: 'purchase' }] }),
      },
      async (req, res) => {
        await sendJson(res, await funnel(req, insightBody(req)));
      },
    );
    project.get(path, { scope: 'insight:read', summary: 'Funnel (query parameters)', throttle: 'clickhouse' }, async (req, res) => {
      await sendJson(res, await funnel(req, insightQueryInput(req)));
    });
  });
  return routes;
}
