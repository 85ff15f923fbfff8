import { createTrendsService } from '@sightline/insights';
import { RouteTable } from '../http/route-registry';
import { createPersonsFunnelRoutes } from '../persons';
import { createQueryRoutes } from '../query';
import { createFunnelRoutes } from './funnel.route';
import { createSavedInsightsRoutes } from './saved-insights.route';
import { createTrendRoutes, type InsightsDeps } from './trend.route';

export type { InsightsDeps } from './trend.route';
export { serializeInsights } from './insight.serializer';
export { trendResultCsv } from './trend.csv';

/** Insights under `/api/projects/:project_id/insights/…` (and `/api/environments/…`), sharing one answer cache. */
export function createInsightsRoutes(deps: InsightsDeps): RouteTable {
  const service = createTrendsService({
    db: deps.db,
    ch: deps.ch,
    layout: deps.layout,
    cacheTtlMs: deps.insightCacheTtlMs ?? 60_000,
    cacheMaxBytes: deps.insightCacheMaxBytes,
    metrics: deps.metrics,
  });
  return new RouteTable().include(
    createTrendRoutes(deps, service),
    createFunnelRoutes(deps, service),
    // The query API runs on the same engines and shares their answer cache.
    createQueryRoutes(deps, service),
    // The persons behind a funnel step: before the persons routes, whose `:person_id` would take `funnel`.
    createPersonsFunnelRoutes(deps, service),
    // After trend/ and funnel/: `:insight_id` would otherwise be tried on those paths first.
    createSavedInsightsRoutes(deps, service),
  );
}
