import type { QueryService } from '@sightline/insights';
import { RouteTable } from '../http/route-registry';
import { createFunnelRoutes } from './funnel.route';
import { createRetentionRoutes } from './retention.route';
import { createPathRoutes } from './path.route';
import { createSavedInsightsRoutes } from './saved-insights.route';
import { createTrendRoutes, type InsightsDeps } from './trend.route';

export type { InsightsDeps } from './trend.route';
export { serializeInsights } from './insight.serializer';
export { loadInsightRelations } from './insight-relations';
export { trendResultCsv } from './trend.csv';
export { createSavedInsightsService } from './saved-insights.service';

/** Insights under `/api/projects/:project_id/insights/…` (and `/api/environments/…`), run by the query service. */
export function createInsightsRoutes(deps: InsightsDeps, queries: QueryService): RouteTable {
  return new RouteTable().include(
    createTrendRoutes(deps, queries),
    createFunnelRoutes(deps, queries),
    createRetentionRoutes(deps, queries),
    createPathRoutes(deps, queries),
    // After trend/, funnel/, retention/ and path/: `:insight_id` would otherwise be tried on those paths first.
    createSavedInsightsRoutes(deps, queries),
  );
}
