import { RouteTable } from '../http/route-registry';
import { createFlagAccessControlsRoutes } from './flag-access-controls.route';
import { createFlagAnalyticsRoutes } from './flag-analytics.route';
import type { FeatureFlagDeps } from './flag-context';
import { createFlagRoleAccessRoutes } from './flag-role-access.route';
import { createFeatureFlagsRoutes } from './feature-flags.route';

export type { FeatureFlagDeps, FlagChangeNotifier } from './flag-context';
export { activeFlagsNamingCohorts } from './feature-flags.repository';
export { hiddenFlagIds } from './flag-access-levels';

/** Feature flag management under `/api/projects/:project_id/feature_flags/` (and `/api/environments/…`). */
export function createFeatureFlagsRouteTable(deps: FeatureFlagDeps): RouteTable {
  return new RouteTable().include(
    createFeatureFlagsRoutes(deps),
    createFlagRoleAccessRoutes(deps),
    createFlagAccessControlsRoutes(deps),
    createFlagAnalyticsRoutes(deps),
  );
}
