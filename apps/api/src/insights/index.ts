import { Router } from 'express';
import { createTrendsService } from '@sightline/insights';
import { createQueryRouter } from '../query';
import { createFunnelRouter } from './funnel.route';
import { createSavedInsightsRouter } from './saved-insights.route';
import { createTrendRouter, type InsightsDeps } from './trend.route';

export type { InsightsDeps } from './trend.route';

/** Insights under `/api/projects/:project_id/insights/…` (and `/api/environments/…`), sharing one answer cache. */
export function createInsightsRouter(deps: InsightsDeps): Router {
  const router = Router();
  const service = createTrendsService({ db: deps.db, ch: deps.ch, cacheTtlMs: deps.insightCacheTtlMs ?? 60_000 });
  router.use(createTrendRouter(deps, service));
  router.use(createFunnelRouter(deps, service));
  // The query API runs on the same engines and shares their answer cache.
  router.use(createQueryRouter(deps, service));
  // After trend/ and funnel/: `:insight_id` would otherwise be tried on those paths first.
  router.use(createSavedInsightsRouter(deps, service));
  return router;
}
