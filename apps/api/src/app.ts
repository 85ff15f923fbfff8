import express, { Router, type Express } from 'express';
import { createProjectTokenCache, findPrincipalByKeyHash, findSessionByTokenHash } from '@sightline/accounts';
import { managementAuth } from '@sightline/auth';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { flagEvaluationEnv } from '@sightline/config';
import { createFlagDefinitionsCache, createInMemoryInvalidation, type FlagDefinitionsCache } from '@sightline/flag-definitions';
import type { GeoIpLookup } from '@sightline/geoip';
import type { JobOperator } from '@sightline/jobs';
import { createServiceApp, inputGuard, type HealthCheck } from '@sightline/http';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { createActionsRouter } from './actions';
import { createCohortsRouter } from './cohorts';
import { createDashboardsRouter } from './dashboards';
import { createDecideRouter } from './decide';
import { createEventDefinitionsRouter } from './event-definitions';
import { createEventsRouter } from './events';
import { createFeatureFlagsRouter, type FlagChangeNotifier } from './feature-flags';
import { createInsightsRouter } from './insights';
import { createJobsRouter } from './jobs';
import { createLoginRouter } from './login';
import { createOrganizationRouter } from './organization';
import { createRemoteConfigRouter } from './remote-config';
import { createStaticSdkRouter, openPosthogJsFiles, type SdkFiles } from './static-sdk';
import { createPersonsRouter } from './persons';
import { createPropertyDefinitionsRouter } from './property-definitions';
import { createUsersRouter } from './users';
import { createWebAppRouter, openWebAppFiles, type WebAppFiles } from './web-app';
import { webDistDir } from '@sightline/web';

export type { FlagChangeNotifier } from './feature-flags';
// What the decide benchmark's ceiling server runs beside the app: the same request reading and answer shapes.
export { readFlagRequest } from './decide/decide-request';
export { buildFlagsResponse, flagsShape } from './decide/decide-response';

export interface ApiDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
  /** Flag definitions for decide/flags; default: a cache invalidated in-process only (embedded mode). */
  flagDefinitions?: FlagDefinitionsCache;
  /** $geoip_* properties for flag evaluation; absent: none. */
  geoip?: GeoIpLookup | null;
  flagsStoreTimeoutMs?: number;
  /** How long a trend answer is served from the cache (0: never); default one minute. */
  insightCacheTtlMs?: number;
  /** Told after every flag write; default: the definitions cache's own notifier. */
  flagChanges?: FlagChangeNotifier;
  /** The browser SDK files under /static/; default: the installed posthog-js package. */
  sdkFiles?: SdkFiles;
  /** The jobs of this process, for the operator route (embedded mode); absent: no such route. */
  jobs?: JobOperator;
  /** The browser app served at `/`; default: the build in apps/web/dist. */
  webApp?: WebAppFiles;
}

/** The management API (`/api/...`), authenticated by personal API keys or the web app's session. */
export function createApiRouter(deps: ApiDeps): Router {
  const router = Router();
  const now = deps.now ?? Date.now;
  // One definitions cache per process; every flag write announces itself through its notifier
  // (Redis pub/sub in distributed mode), so each api process drops its cached definitions.
  const flagDefinitions = deps.flagDefinitions ?? createFlagDefinitionsCache({ db: deps.db, channel: createInMemoryInvalidation() });
  // Public flag evaluation, and local-evaluation definitions (personal key) for server SDKs.
  router.use(
    createDecideRouter({
      db: deps.db,
      definitions: flagDefinitions,
      projectTokens: createProjectTokenCache(deps.db),
      geoip: deps.geoip ?? null,
      storeTimeoutMs: deps.flagsStoreTimeoutMs ?? flagEvaluationEnv.FLAGS_STORE_TIMEOUT_MS.default,
    }),
  );
  // Public, for posthog-js in browsers: its remote config and its own script files.
  router.use(createRemoteConfigRouter({ db: deps.db, definitions: flagDefinitions }));
  router.use(createStaticSdkRouter(deps.sdkFiles ?? openPosthogJsFiles()));
  // Signing in and out: before authentication, as they are how a browser gets its session.
  router.use(createLoginRouter({ db: deps.db, now }));
  router.use(
    '/api',
    express.json({ limit: '5mb' }),
    managementAuth({
      personalKeys: (hash) => findPrincipalByKeyHash(deps.db, hash),
      sessions: (hash) => findSessionByTokenHash(deps.db, hash, new Date(now())),
    }),
    // After authentication, as DRF parses a body only once the caller is known.
    inputGuard(),
  );
  router.use(createUsersRouter(deps.db));
  router.use(createOrganizationRouter(deps.db));
  router.use(createActionsRouter(deps.db));
  router.use(createDashboardsRouter(deps.db));
  router.use(createCohortsRouter({ db: deps.db, ch: deps.ch, now: deps.now ?? Date.now, flagChanges: deps.flagChanges ?? flagDefinitions.notifier }));
  router.use(createInsightsRouter({ db: deps.db, ch: deps.ch, now: deps.now ?? Date.now, insightCacheTtlMs: deps.insightCacheTtlMs, metrics: deps.metrics }));
  router.use(createEventsRouter({ db: deps.db, ch: deps.ch, now }));
  router.use(createEventDefinitionsRouter(deps.db));
  router.use(createPropertyDefinitionsRouter(deps.db));
  router.use(createPersonsRouter({ db: deps.db, ch: deps.ch, now: deps.now ?? Date.now }));
  router.use(createFeatureFlagsRouter({ db: deps.db, ch: deps.ch, now: deps.now ?? Date.now, flagChanges: deps.flagChanges ?? flagDefinitions.notifier }));
  if (deps.jobs) router.use(createJobsRouter(deps.jobs));
  // Last: the app's page answers only paths no other route owns (never /api, /e, /flags, …).
  router.use(createWebAppRouter(deps.webApp ?? openWebAppFiles(webDistDir)));
  return router;
}

export function createApiApp(deps: ApiDeps & { readiness: HealthCheck[]; isShuttingDown: () => boolean }): Express {
  return createServiceApp({ ...deps, name: 'api', routers: [createApiRouter(deps)] });
}
