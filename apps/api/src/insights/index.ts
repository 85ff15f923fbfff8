import { Router } from 'express';
import { createTrendRouter, type InsightsDeps } from './trend.route';

export type { InsightsDeps } from './trend.route';

/** Insights under `/api/projects/:project_id/insights/…` (and `/api/environments/…`). */
export function createInsightsRouter(deps: InsightsDeps): Router {
  const router = Router();
  router.use(createTrendRouter(deps));
  return router;
}
