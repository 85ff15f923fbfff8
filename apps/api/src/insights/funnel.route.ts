import { Router, type Request } from 'express';
import { requireScope } from '@sightline/auth';
import { funnelBodyOf, parseCorrelationOptions, parseFunnelFilter, type CorrelationResult, type FunnelResult, type TrendsService } from '@sightline/insights';
import { projectAccess } from '../http/project-access';
import { asValidationError, insightBody, insightQueryInput, truthy } from './insight-request';
import type { InsightsDeps } from './trend.route';

/** PostHog's legacy funnel endpoint under both prefixes; GET takes the filter as query parameters. */
export function createFunnelRouter(deps: InsightsDeps, service: TrendsService): Router {
  const router = Router();
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
    router.post(correlationPath, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      res.json(await correlation(req, insightBody(req)));
    });
    router.get(correlationPath, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      res.json(await correlation(req, insightQueryInput(req)));
    });
    const path = `${prefix}/insights/funnel`;
    router.post(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      res.json(await funnel(req, insightBody(req)));
    });
    router.get(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      res.json(await funnel(req, insightQueryInput(req)));
    });
  }
  return router;
}
