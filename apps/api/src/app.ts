import express, { Router, type Express } from 'express';
import {
  createPrincipalCache,
  createProjectCache,
  createProjectTokenCache,
  findSessionByTokenHash,
  type PrincipalChanges,
  type ProjectChanges,
  type ProjectTokenChanges,
  type ProjectTokenLookup,
} from '@sightline/accounts';
import { managementAuth } from '@sightline/auth';
import {
  boundAnalyticsReads,
  DEFAULT_ANALYTICS_QUERY_LIMITS,
  QueryLimitError,
  ReadGateBusyError,
  type ClickHouseClient,
  type ClickHouseLayout,
} from '@sightline/clickhouse';
import { accessEnv, flagEvaluationEnv } from '@sightline/config';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache, type FlagDefinitionsCache } from '@sightline/flag-store';
import { createQueryService } from '@sightline/insights';
import type { GeoIpLookup } from '@sightline/geoip';
import type { JobOperator } from '@sightline/jobs';
import { ApiError, createServiceApp, errors, inputGuard, nextWorkTurn, preRoutedFastPath, type FastPathFactory, type HealthCheck } from '@sightline/http';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { createDecidePersonCache, type DecidePersonCache, type PersonChange } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { createActionsRoutes } from './actions';
import { createCohortsRoutes, serializeCohorts } from './cohorts';
import { createDashboardsRoutes } from './dashboards';
import { createFlagEvaluationRouter, createLocalEvaluationRoutes, flagEvaluationFastPath, type DecideRouteDeps } from './decide';
import { createEventDefinitionsRoutes } from './event-definitions';
import { createEventsRoutes } from './events';
import { activeFlagsNamingCohorts, createFeatureFlagsRouteTable, type FlagChangeNotifier } from './feature-flags';
import { createGroupsRoutes } from './groups';
import { createGroupsTypesRoutes } from './groups-types';
import type { AccessOptions } from './http/access-config';
import type { AnalyticsOptions } from './http/analytics-config';
import { managementCors, managementSecurityHeaders } from './http/management-hardening';
import { mountRouteChains, PROJECT_PREFIXES, routeChains, RouteTable } from './http/route-registry';
import { createThrottle } from './http/throttle';
import { createInsightsRoutes, createSavedInsightsService } from './insights';
import { createJobsRoutes } from './jobs';
import { createLoginRouter, createSignInThrottle } from './login';
import { createOrganizationRoutes } from './organization';
import { createPersonalApiKeysRoutes } from './personal-api-keys';
import { createPersonsFunnelRoutes, createPersonsPathRoutes, createPersonsRetentionRoutes, createPersonsRoutes } from './persons';
import { createPropertyDefinitionsRoutes } from './property-definitions';
import { createQueryRoutes } from './query';
import { createRemoteConfigRouter } from './remote-config';
import { createApiSchemaRouter } from './schema';
import { createStaticSdkRouter, openPosthogJsFiles, type SdkFiles } from './static-sdk';
import { createUsersRoutes } from './users';
import { createWebAppRouter, openWebAppFiles, type WebAppFiles } from './web-app';
import { webDistDir } from '@sightline/web';

export type { FlagChangeNotifier } from './feature-flags';
export type { RateLimits } from './http/throttle';
export { POSTHOG_RATE_LIMITS } from './http/throttle';
export { accessOptionsFromConfig, type AccessOptions } from './http/access-config';
export { analyticsOptionsFromConfig, type AnalyticsOptions } from './http/analytics-config';
// What the decide benchmark's ceiling server runs beside the app: the same request reading and answer shapes.
export { readFlagRequest } from './decide/decide-request';
export { buildFlagsResponse, flagsResponseText, flagsShape } from './decide/decide-response';

export interface ApiDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  clickhouseLayout?: ClickHouseLayout;
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
  /** Flag definitions for decide/flags; default: a cache invalidated in-process only (embedded mode). */
  flagDefinitions?: FlagDefinitionsCache;
  /** The stored persons decide reads (the mains wire one invalidated by the worker); absent: read on every request. */
  decidePersons?: DecidePersonCache;
  /** $geoip_* properties for flag evaluation; absent: none. */
  geoip?: GeoIpLookup | null;
  flagsStoreTimeoutMs?: number;
  /** How long a trend answer is served from the cache (0: never); default one minute. */
  insightCacheTtlMs?: number;
  /** ClickHouse limits of a request's queries and the answer cache's size; default DEFAULT_ANALYTICS_QUERY_LIMITS, 64 MiB. */
  analytics?: AnalyticsOptions;
  /** Told after every flag write; default: the definitions cache's own notifier. */
  flagChanges?: FlagChangeNotifier;
  /** The browser SDK files under /static/; default: the installed posthog-js package. */
  sdkFiles?: SdkFiles;
  /** The jobs of this process, for the operator route (embedded mode); absent: no such route. */
  jobs?: JobOperator;
  access?: AccessOptions;
  /** The browser app served at `/`; default: the build in apps/web/dist. */
  webApp?: WebAppFiles;
  /**
   * Where a reset project API key is announced and heard, so every process's token cache drops
   * the old key at once: Redis pub/sub in distributed mode; default in-process (embedded mode).
   */
  projectTokenChanges?: ProjectTokenChanges;
  /**
   * Where a change to a user's personal API keys is announced and heard, so every process's
   * principal cache drops them: Redis pub/sub in distributed mode; default in-process (embedded mode).
   */
  principalChanges?: PrincipalChanges;
  /** How long a looked-up personal key is used without a lookup; default PRINCIPAL_CACHE_MAX_AGE_MS (0: looked up per request). */
  principalCacheMaxAgeMs?: number;
  /**
   * Where a change to a project's row is announced and heard, so every process's project cache
   * drops it: Redis pub/sub in distributed mode; default in-process (embedded mode).
   */
  projectChanges?: ProjectChanges;
  /** How long a read project is used without a read; default PROJECT_CACHE_MAX_AGE_MS (0: read per request). */
  projectCacheMaxAgeMs?: number;
}

/**
 * Every personal-key route, each declared once (method, path, scope, schema, summary).
 * `projectTokens`: the process's token cache (default: one of the table's own).
 */
export function createApiRouteTable(
  deps: ApiDeps,
  flagDefinitions: FlagDefinitionsCache,
  projectTokens?: ProjectTokenLookup,
  keysChanged: (userId: number) => Promise<void> = (userId) => deps.principalChanges?.publish(userId) ?? Promise.resolve(),
  projectChanged?: (projectId: number) => Promise<void>,
): RouteTable {
  const now = deps.now ?? Date.now;
  const flagChanges = deps.flagChanges ?? flagDefinitions.notifier;
  const tokens = projectTokens ?? createProjectTokenCache(deps.db, { changes: deps.projectTokenChanges });
  // Person writes outside ingestion reach decide's person caches as the worker's do.
  const personsChanged = (teamId: number) => deps.decidePersons?.announce(teamId) ?? Promise.resolve();
  // Every ClickHouse read a request makes goes through queryClickhouse on this client: the limits of
  // one query, the read gate, the duration histogram, and the turns a large result is parsed in.
  const queryLimits = deps.analytics?.queryLimits ?? DEFAULT_ANALYTICS_QUERY_LIMITS;
  const ch = boundAnalyticsReads(deps.ch, queryLimits, {
    duration: deps.metrics.clickhouseQueryDuration,
    nextTurn: nextWorkTurn,
  });
  // One query service: the legacy insight routes, the query API and the funnel-actor routes run
  // every kind of query through its registry of runners and share its answer cache.
  const queries = createQueryService({
    db: deps.db,
    ch,
    layout: deps.clickhouseLayout,
    cacheTtlMs: deps.insightCacheTtlMs ?? 60_000,
    cacheMaxBytes: deps.analytics?.cacheMaxBytes,
    metrics: deps.metrics,
  });
  // Dashboard tiles are computed as a saved insight's page computes them.
  const savedInsights = createSavedInsightsService({ db: deps.db, ch, now, metrics: deps.metrics }, queries);
  return new RouteTable().include(
    createLocalEvaluationRoutes({ db: deps.db, definitions: flagDefinitions, projectTokens: tokens }),
    createUsersRoutes(deps.db),
    createOrganizationRoutes(deps.db, {
      tokenChanges: deps.projectTokenChanges,
      projectChanged,
      logger: deps.logger,
      maxQueryTimeoutSeconds: queryLimits.maxExecutionSeconds,
    }),
    createPersonalApiKeysRoutes(deps.db, keysChanged),
    createActionsRoutes(deps.db),
    createDashboardsRoutes(deps.db, async (project, row, refresh) =>
      refresh === 'cache_only' ? savedInsights.cachedResult(project, row) : savedInsights.result(project, row, refresh === 'recompute'),
    ),
    createCohortsRoutes({
      db: deps.db,
      ch,
      now,
      flagChanges,
      personsChanged,
      flagsNamingCohorts: (teamId, cohortIds) => activeFlagsNamingCohorts(deps.db, teamId, cohortIds),
    }),
    createInsightsRoutes({ db: deps.db, ch, now, metrics: deps.metrics }, queries),
    createQueryRoutes({ now }, queries),
    // The persons behind a funnel step: before the persons routes, whose `:person_id` would take `funnel`.
    createPersonsFunnelRoutes({ now }, queries),
    createPersonsPathRoutes({ now }, queries),
    createPersonsRetentionRoutes({ now }, queries),
    createEventsRoutes({ db: deps.db, ch, now }),
    createEventDefinitionsRoutes(deps.db),
    createPropertyDefinitionsRoutes(deps.db),
    createPersonsRoutes({ db: deps.db, ch, now, personsChanged, serializeCohorts }),
    createGroupsTypesRoutes({ db: deps.db }),
    createGroupsRoutes({ db: deps.db, ch, now }),
    createFeatureFlagsRouteTable({ db: deps.db, ch, now, flagChanges }),
    deps.jobs ? createJobsRoutes(deps.jobs) : new RouteTable(),
  );
}

/**
 * A query stopped by its limits asked for too much: the client's to narrow, not a server fault.
 * One that found no turn in the engine in time is throttled, as PostHog's concurrency limit is.
 */
const analyticsReadErrors: express.ErrorRequestHandler = (err: unknown, _req, _res, next) =>
  next(
    err instanceof QueryLimitError
      ? errors.validation(err.message, null, 'query_limit_exceeded')
      : err instanceof ReadGateBusyError
        ? new ApiError(429, 'throttled_error', 'concurrency_limit_exceeded', err.message, null, { 'Retry-After': String(err.retryAfterSeconds) })
        : err,
  );

/** The routes answered before Express (preRoutedFastPath): the query API, every kind, under both prefixes. */
const PRE_ROUTED_PATHS = new Set(PROJECT_PREFIXES.map((prefix) => `post ${prefix}/query`));

/** The api's routes, and the handlers that answer before Express (createServiceApp's fastPaths). */
export interface ApiRouting {
  router: Router;
  fastPaths: FastPathFactory[];
}

/**
 * The management API (`/api/...`), authenticated by personal API keys or the web app's session,
 * flag evaluation, and the web app at `/`.
 */
export function createApiRouter(deps: ApiDeps): ApiRouting {
  const router = Router();
  const access = deps.access ?? {};
  const now = deps.now ?? Date.now;
  // One definitions cache per process; every flag write announces itself through its notifier
  // (Redis pub/sub in distributed mode), so each api process drops its cached definitions.
  const flagDefinitions = deps.flagDefinitions ?? createFlagDefinitionsCache({ db: deps.db, channel: createInMemoryInvalidation() });
  // One token cache per process, told of every reset project key (Redis pub/sub in distributed mode).
  const projectTokenChanges = deps.projectTokenChanges ?? createInMemoryInvalidation<number>();
  const projectTokens = createProjectTokenCache(deps.db, {
    changes: projectTokenChanges,
    onError: (err, context) => deps.logger.warn({ err }, context),
  });
  // The management API's statements queue behind decide's (and the worker's) where the store
  // runs one at a time (the embedded PGlite): a burst of analytics requests must not hold decide.
  const managementDb = deps.db.withPriority?.('background') ?? deps.db;
  // A key's principal is looked up once per few seconds, not per request; a change of a user's keys
  // drops that user's entries here at once and, announced, in every other process (docs/http-api.md).
  const principalChanges = deps.principalChanges ?? createInMemoryInvalidation<number>();
  const principals = createPrincipalCache(managementDb, {
    changes: principalChanges,
    maxAgeMs: deps.principalCacheMaxAgeMs,
    onError: (err, context) => deps.logger.warn({ err }, context),
  });
  const keysChanged = async (userId: number) => {
    principals.forget(userId);
    // A lost announcement leaves the other processes' entries to their time bound.
    await principalChanges.publish(userId).catch((err: unknown) => deps.logger.warn({ err }, 'announcing a personal API key change'));
  };
  // A project's row is read once per few seconds, not per request (the query API's fixed cost); a
  // change through the API drops it here at once and, announced, in every other process (docs/http-api.md).
  const projectChanges = deps.projectChanges ?? createInMemoryInvalidation<number>();
  const projects = createProjectCache(managementDb, {
    changes: projectChanges,
    maxAgeMs: deps.projectCacheMaxAgeMs,
    onError: (err, context) => deps.logger.warn({ err }, context),
  });
  const projectChanged = async (projectId: number) => {
    projects.forget(projectId);
    // A lost announcement leaves the other processes' entries to their time bound.
    await projectChanges.publish(projectId).catch((err: unknown) => deps.logger.warn({ err, teamId: projectId }, 'announcing a project change'));
  };
  const table = createApiRouteTable({ ...deps, db: managementDb, projectTokenChanges }, flagDefinitions, projectTokens, keysChanged, projectChanged);
  // A personal key, else the web app's session cookie (with CSRF checks on writes).
  const authenticate = managementAuth({
    personalKeys: principals.lookup,
    sessions: (hash) => findSessionByTokenHash(managementDb, hash, new Date(now())),
  });

  // Public flag evaluation (project key) for SDKs, first: the hot path walks no other route.
  // No personal key, no throttle. Its POSTs are answered before Express (flagEvaluationFastPath).
  const flagEvaluation: DecideRouteDeps = {
    db: deps.db,
    definitions: flagDefinitions,
    persons: deps.decidePersons ?? createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 0 }),
    projectTokens,
    geoip: deps.geoip ?? null,
    storeTimeoutMs: deps.flagsStoreTimeoutMs ?? flagEvaluationEnv.FLAGS_STORE_TIMEOUT_MS.default,
  };
  router.use(createFlagEvaluationRouter(flagEvaluation));
  // The API document and its page are public, as PostHog's /api/schema/ is.
  router.use(createApiSchemaRouter(table));
  // Public, for posthog-js in browsers: its remote config and its own script files.
  router.use(createRemoteConfigRouter({ db: deps.db, definitions: flagDefinitions }));
  router.use(createStaticSdkRouter(deps.sdkFiles ?? openPosthogJsFiles()));
  // The handlers every /api request meets before its route, kept as values: the routes answered
  // before Express (below) run these same instances in the same order.
  const apiHardening = [managementCors(access.corsOrigins ?? []), managementSecurityHeaders()];
  const apiInput = [
    express.json({ limit: access.bodyLimitBytes ?? 5 * 1024 * 1024 }),
    authenticate,
    // After authentication, as DRF parses a body only once the caller is known.
    inputGuard(),
  ];
  router.use('/api', ...apiHardening);
  // Signing in and out: before authentication, as they are how a browser gets its session.
  const signInThrottle = createSignInThrottle({
    failureLimit: access.loginFailureLimit ?? accessEnv.LOGIN_FAILURE_LIMIT.default,
    addressFailureLimit: access.loginAddressFailureLimit ?? accessEnv.LOGIN_ADDRESS_FAILURE_LIMIT.default,
    redis: access.loginThrottleRedis,
    keyPrefix: access.rateLimitKeyPrefix && `${access.rateLimitKeyPrefix}:sign_in`,
    onStoreError: (err) => deps.logger.warn({ err }, 'sign-in throttle store failed; attempt let through'),
  });
  router.use(createLoginRouter({ db: deps.db, now, signInThrottle }));
  router.use('/api', ...apiInput);
  const chains = routeChains(table, {
    findProject: projects.findById,
    db: managementDb,
    authenticate,
    throttle: access.rateLimits
      ? createThrottle({
          limits: access.rateLimits,
          redis: access.rateLimitRedis,
          keyPrefix: access.rateLimitKeyPrefix,
          metrics: deps.metrics,
          onStoreError: (err) => deps.logger.warn({ err }, 'rate limiter store failed; request let through'),
        })
      : undefined,
  });
  const registry = mountRouteChains(chains, authenticate);
  // Only requests for the registry's own paths walk its routes.
  router.use((req, res, next) => (req.path.startsWith('/api/') || req.path.startsWith('/flags/definitions') ? registry(req, res, next) : next()));
  router.use(analyticsReadErrors);
  // The query API answers before Express: an analyst's short query would otherwise pay the walk
  // through every router above as a measurable share of its time (bench:sql). Same handlers, same answers.
  const queryApi = preRoutedFastPath(
    chains
      .filter(({ route }) => PRE_ROUTED_PATHS.has(`${route.method} ${route.path}`))
      .map(({ route, handlers }) => ({
        method: route.method.toUpperCase(),
        path: route.path,
        before: [...apiHardening, ...apiInput],
        handlers,
        onError: [analyticsReadErrors],
      })),
  );
  // Last: the app's page answers only paths no other route owns (never /api, /e, /flags, …).
  router.use(createWebAppRouter(deps.webApp ?? openWebAppFiles(webDistDir)));
  return { router, fastPaths: [flagEvaluationFastPath(flagEvaluation), queryApi] };
}

export function createApiApp(deps: ApiDeps & { readiness: HealthCheck[]; isShuttingDown: () => boolean; trustProxy?: string }): Express {
  const { router, fastPaths } = createApiRouter(deps);
  return createServiceApp({ ...deps, name: 'api', routers: [router], fastPaths });
}
