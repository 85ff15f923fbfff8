import { Router } from 'express';
import { createFlagAccessControlsRouter } from './flag-access-controls.route';
import { createFlagAnalyticsRouter } from './flag-analytics.route';
import type { FeatureFlagDeps } from './flag-context';
import { createFlagRoleAccessRouter } from './flag-role-access.route';
import { createFeatureFlagsRoutes } from './feature-flags.route';

export type { FeatureFlagDeps, FlagChangeNotifier } from './flag-context';

/** Feature flag management under `/api/projects/:project_id/feature_flags/` (and `/api/environments/…`). */
export function createFeatureFlagsRouter(deps: FeatureFlagDeps): Router {
  const router = Router();
  router.use(createFeatureFlagsRoutes(deps));
  router.use(createFlagRoleAccessRouter(deps));
  router.use(createFlagAccessControlsRouter(deps));
  router.use(createFlagAnalyticsRouter(deps));
  return router;
}
