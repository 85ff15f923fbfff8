import type { Express } from 'express';
import type { EventBus, Topics } from '@sightline/bus';
import { createServiceApp, type HealthCheck } from '@sightline/http';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { createCaptureRouter } from './capture.route';
import type { ProjectKeyResolver } from './project-keys';

export { createCaptureRouter, CAPTURE_ROUTES, BATCH_LIMITS, EVENT_LIMITS, RETRY_AFTER_SECONDS, type CaptureRoute } from './capture.route';
export { createProjectKeyResolver, type ProjectKeyResolver } from './project-keys';

export interface GatewayDeps {
  bus: EventBus;
  topics: Topics;
  projectKeys: ProjectKeyResolver;
  logger: Logger;
  metrics: Metrics;
  sendTimeoutMs: number;
  maxInflightRequests?: number;
  readiness: HealthCheck[];
  isShuttingDown: () => boolean;
  now?: () => number;
}

/** The ingestion gateway: capture/batch HTTP → event bus. No side effects until listened on. */
export function createGatewayApp(deps: GatewayDeps): Express {
  return createServiceApp({ ...deps, name: 'gateway', routers: [], hotRouters: [createCaptureRouter(deps)] });
}
