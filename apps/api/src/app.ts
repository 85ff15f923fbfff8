import express, { Router, type Express } from 'express';
import { findPrincipalByKeyHash } from '@sightline/accounts';
import { personalKeyAuth } from '@sightline/auth';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { createServiceApp, type HealthCheck } from '@sightline/http';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { createFlagAccessControlsRouter } from './feature-flags/flag-access-controls.route';
import { createFlagAnalyticsRouter } from './feature-flags/flag-analytics.route';
import type { FlagChangeNotifier } from './feature-flags/flag-context';
import { createFlagRoleAccessRouter } from './feature-flags/flag-role-access.route';
import { createFeatureFlagsRouter } from './feature-flags/feature-flags.route';
import { createInsightsRouter } from './insights.route';
import { createProjectsRouter } from './projects.route';
import { createRolesRouter } from './roles.route';

export type { FlagChangeNotifier } from './feature-flags/flag-context';

export interface ApiDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
  /** Told after every flag write so flag evaluation drops cached definitions. */
  flagChanges?: FlagChangeNotifier;
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
  const flagDeps = { db: deps.db, ch: deps.ch, now: deps.now ?? Date.now, flagChanges: deps.flagChanges };
  router.use(createFeatureFlagsRouter(flagDeps));
  router.use(createFlagRoleAccessRouter(flagDeps));
  router.use(createFlagAccessControlsRouter(flagDeps));
  router.use(createFlagAnalyticsRouter(flagDeps));
  router.use(createRolesRouter(deps.db));
  return router;
}

export function createApiApp(deps: ApiDeps & { readiness: HealthCheck[]; isShuttingDown: () => boolean }): Express {
  return createServiceApp({ ...deps, name: 'api', routers: [createApiRouter(deps)] });
}
