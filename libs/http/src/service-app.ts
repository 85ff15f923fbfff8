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
  /**
   * Which proxies' X-Forwarded-For Express believes for `req.ip` (its 'trust proxy' setting:
   * loopback, uniquelocal, CIDRs comma-separated, or a hop count). Empty or absent: none, so a
   * client cannot choose its own address with a header.
   */
  trustProxy?: string;
}

/** The configured text as Express's 'trust proxy' value. */
export function trustProxySetting(text: string | undefined): boolean | number | string[] {
  const value = (text ?? '').trim();
  if (value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

/**
 * The frame every Sightline HTTP app shares: request context and metrics, /_health,
 * /_ready and /metrics, the app's routers, then JSON 404 and the DRF error handler.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', trustProxySetting(options.trustProxy));
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
