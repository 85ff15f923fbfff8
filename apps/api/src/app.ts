import express, { Router, type Express } from 'express';
import { findPrincipalByKeyHash } from '@sightline/accounts';
import { personalKeyAuth } from '@sightline/auth';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { createServiceApp, type HealthCheck } from '@sightline/http';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { createInsightsRouter } from './insights.route';
import { createProjectsRouter } from './projects.route';

export interface ApiDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
}

/** The management API (`/api/...`), authenticated by personal API keys. */
export function createApiRouter(deps: ApiDeps): Router {
  const router = Router();
  router.use(
    '/api',
    express.json({ limit: '5mb' }),
    personalKeyAuth((hash) => findPrincipalByKeyHash(deps.db, hash)),
  );
  router.use(createProjectsRouter(deps.db));
  router.use(createInsightsRouter({ db: deps.db, ch: deps.ch, now: deps.now ?? Date.now }));
  return router;
}

export function createApiApp(deps: ApiDeps & { readiness: HealthCheck[]; isShuttingDown: () => boolean }): Express {
  return createServiceApp({ ...deps, name: 'api', routers: [createApiRouter(deps)] });
}
