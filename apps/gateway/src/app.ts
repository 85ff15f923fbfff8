import express, { type Express } from 'express';
import type { EventBus, Topics } from '@sightline/bus';
import { errorHandler, healthRouter, notFoundHandler, requestContext, type HealthCheck } from '@sightline/http';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { createCaptureRouter } from './capture.route';
import type { ProjectKeyResolver } from './project-keys';

export { createCaptureRouter, CAPTURE_ROUTES, MAX_BODY_BYTES } from './capture.route';
export { createProjectKeyResolver, type ProjectKeyResolver } from './project-keys';

export interface GatewayDeps {
  bus: EventBus;
  topics: Topics;
  projectKeys: ProjectKeyResolver;
  logger: Logger;
  metrics: Metrics;
  sendTimeoutMs: number;
  readiness: HealthCheck[];
  isShuttingDown: () => boolean;
  now?: () => number;
}

/** The ingestion gateway: capture/batch HTTP → event bus. No side effects until listened on. */
export function createGatewayApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestContext('gateway', deps.logger, deps.metrics));
  app.use(healthRouter({ readiness: deps.readiness, isShuttingDown: deps.isShuttingDown, registry: deps.metrics.registry }));
  app.use(createCaptureRouter(deps));
  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
