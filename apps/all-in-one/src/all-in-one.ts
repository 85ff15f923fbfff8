import type { Express } from 'express';
import { createProjectTokenCache } from '@sightline/accounts';
import { createApiRouter, type AccessOptions, type AnalyticsOptions } from '@sightline/api';
import { createInMemoryInvalidation, type EventBus, type Topics } from '@sightline/bus';
import type { ClickHouseClient, ClickHouseLayout } from '@sightline/clickhouse';
import { type FlagDefinitionsCache } from '@sightline/flag-store';
import { createCaptureRouter, createProjectKeyResolver } from '@sightline/gateway';
import type { GeoIpLookup } from '@sightline/geoip';
import { createServiceApp, type HealthCheck } from '@sightline/http';
import type { JobScheduler } from '@sightline/jobs';
import type { Logger } from '@sightline/logger';
import { createJobOperator } from '@sightline/maintenance-jobs';
import type { Metrics } from '@sightline/metrics';
import { createDecidePersonCache, createPersonChangeNotifier, type PersonChange } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { createWorker, type Worker, type WorkerConsumerOptions } from '@sightline/worker';

export interface AllInOneDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER with CLICKHOUSE_URL); absent: one server. */
  clickhouseLayout?: ClickHouseLayout;
  /** The api's ClickHouse client (openAnalyticsReader: its own embedded session); default `ch`. */
  analyticsReads?: ClickHouseClient;
  bus: EventBus;
  topics: Topics;
  scheduler: JobScheduler;
  logger: Logger;
  metrics: Metrics;
  sendTimeoutMs: number;
  consumer?: WorkerConsumerOptions;
  maxInflightRequests?: number;
  readiness: HealthCheck[];
  isShuttingDown: () => boolean;
  now?: () => number;
  flagDefinitions?: FlagDefinitionsCache;
  geoip?: GeoIpLookup | null;
  flagsStoreTimeoutMs?: number;
  /** How long a trend answer is served from the cache (0: never); default one minute. */
  insightCacheTtlMs?: number;
  /** ClickHouse limits of a request's queries and the answer cache's size. */
  analytics?: AnalyticsOptions;
  /** How long decide reuses a stored person it read (FLAGS_PERSON_CACHE_MS); default 0: read on every request. */
  flagsPersonCacheMs?: number;
  /** The management API's rate limits, CORS and body limit. */
  access?: AccessOptions;
  /** Express 'trust proxy' (TRUSTED_PROXIES). */
  trustProxy?: string;
}

/**
 * Gateway, worker and api in one process and on one port, so `{base_url}` and
 * `{ingest_url}` are the same address. Same routers and pipeline as the separate apps.
 */
export function createAllInOne(deps: AllInOneDeps): { app: Express; worker: Worker } {
  // The worker's person writes drop decide's cached answers of those persons, in-process.
  const personChanges = createInMemoryInvalidation<PersonChange>();
  const decidePersons = createDecidePersonCache({ channel: personChanges, maxAgeMs: deps.flagsPersonCacheMs ?? 0 });
  const worker = createWorker({ ...deps, personChanges: createPersonChangeNotifier(personChanges) });
  // `npm run jobs` reaches the jobs through this process while it holds the embedded stores.
  const jobs = createJobOperator({ ...deps, nextRun: async (name) => (await deps.scheduler.nextRuns())[name] ?? null });
  // A reset project API key reaches the capture route's token cache and the api's, in-process.
  const projectTokenChanges = createInMemoryInvalidation<number>();
  const api = createApiRouter({ ...deps, ch: deps.analyticsReads ?? deps.ch, jobs, decidePersons, projectTokenChanges });
  const app = createServiceApp({
    ...deps,
    name: 'all-in-one',
    liveness: worker.liveness,
    readiness: [...worker.readiness, ...deps.readiness],
    hotRouters: [
      createCaptureRouter({
        bus: deps.bus,
        topics: deps.topics,
        projectKeys: createProjectKeyResolver(createProjectTokenCache(deps.db, { changes: projectTokenChanges })),
        metrics: deps.metrics,
        sendTimeoutMs: deps.sendTimeoutMs,
        maxInflightRequests: deps.maxInflightRequests,
        isShuttingDown: deps.isShuttingDown,
        now: deps.now,
      }),
    ],
    routers: [api.router],
    fastPaths: api.fastPaths,
  });
  return { app, worker };
}
