import express, { type Express, type RequestHandler, type Router } from 'express';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { healthRouter, type HealthCheck } from './health';
import { defineLazyRequestLogger, errorHandler, notFoundHandler, requestContext } from './middleware';

export interface ServiceAppOptions {
  /** Label of the `app` metric dimension. */
  name: string;
  logger: Logger;
  metrics: Metrics;
  liveness?: readonly HealthCheck[];
  readiness: readonly HealthCheck[];
  isShuttingDown: () => boolean;
  routers: readonly Router[];
  /**
   * Routers matched before the health/metrics router: the hot path (capture), so its requests
   * do not walk other routers' layers first. Their paths must not overlap /_health, /_ready, /metrics.
   */
  hotRouters?: readonly (Router | RequestHandler)[];
}

/**
 * The frame every Sightline HTTP app shares: request context and metrics, /_health,
 * /_ready and /metrics, the app's routers, then JSON 404 and the DRF error handler.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  defineLazyRequestLogger(app, options.logger);
  app.use(requestContext(options.name, options.metrics));
  for (const router of options.hotRouters ?? []) app.use(router);
  app.use(
    healthRouter({ liveness: options.liveness, readiness: options.readiness, isShuttingDown: options.isShuttingDown, registry: options.metrics.registry }),
  );
  for (const router of options.routers) app.use(router);
  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
