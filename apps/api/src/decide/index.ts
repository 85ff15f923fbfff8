import { Router } from 'express';
import { createFlagEvaluationRouter, type DecideRouteDeps } from './decide.route';
import { createLocalEvaluationRouter } from './local-evaluation.route';

export type { DecideRouteDeps } from './decide.route';

/** Flag evaluation for SDKs: `/decide` and `/flags` (project key), and local-evaluation definitions (personal key). */
export function createDecideRouter(deps: DecideRouteDeps): Router {
  const router = Router();
  router.use(createLocalEvaluationRouter(deps));
  router.use(createFlagEvaluationRouter(deps));
  return router;
}
