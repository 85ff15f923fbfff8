import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type RequestHandler, type Router } from 'express';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import type { FastPathFactory } from './fast-path';
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
  /** Handlers that answer some requests before Express sees them at all (see FastPath). */
  fastPaths?: readonly FastPathFactory[];
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
  const fastPaths = (options.fastPaths ?? []).map((make) => make({ app: options.name, logger: options.logger, metrics: options.metrics, express: app }));
  if (fastPaths.length > 0) {
    // Express's app function calls app.handle for every request (listen, supertest, mounting):
    // the fast paths look first, before Express sets up its request and response objects.
    const expressApp = app as unknown as { handle: (req: IncomingMessage, res: ServerResponse, next?: unknown) => void };
    const handle = expressApp.handle.bind(app);
    expressApp.handle = (req, res, next) => {
      for (const fastPath of fastPaths) if (fastPath(req, res)) return;
      handle(req, res, next);
    };
  }
  return app;
}
