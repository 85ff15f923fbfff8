import { Router, type Request } from 'express';
import { requireScope } from '@sightline/auth';
import { errors } from '@sightline/http';
import { findInputProblem } from '@sightline/json-input';
import { parseFunnelFilter, trendFilterFromQuery, type FunnelResult, type TrendsService } from '@sightline/insights';
import { projectAccess } from '../http/project-access';
import { asValidationError, truthy } from './insight-errors';
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
  for (const prefix of ['/api/environments/:project_id', '/api/projects/:project_id']) {
    const path = `${prefix}/insights/funnel`;
    router.post(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
      res.json(await funnel(req, body));
    });
    router.get(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      let input;
      try {
        input = trendFilterFromQuery(req.query as Record<string, unknown>);
        const problem = findInputProblem(input);
        if (problem) throw errors.validation(problem.detail, problem.attr, problem.code);
      } catch (error) {
        throw asValidationError(error);
      }
      res.json(await funnel(req, input));
    });
  }
  return router;
}
