import type { Express } from 'express';
import { createProjectTokenCache } from '@sightline/accounts';
import type { BatchHandler, EventBus, Topics } from '@sightline/bus';
import type { ClickHouseClient, ClickHouseLayout } from '@sightline/clickhouse';
import { workerConsumerEnv } from '@sightline/config';
import { createServiceApp, type HealthCheck } from '@sightline/http';
import type { JobScheduler } from '@sightline/jobs';
import type { Logger } from '@sightline/logger';
import { createPersonEventsDeletionJob } from '@sightline/maintenance-jobs';
import type { Metrics } from '@sightline/metrics';
import type { PersonChangeNotifier } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { createDeadLettersConsumer } from './dead-letters.consumer';
import { createEventsConsumer } from './events.consumer';
import { createLagMonitor, type MonitoredSubscription } from './lag-monitor';

export { createEventsConsumer } from './events.consumer';
// The pipeline's steps one by one, for bench/embedded-floors.ts (each piece's cost alone).
export { checkIngestMessage } from './pipeline/parse.step';
export { normalizeStep, type PreparedEvent } from './pipeline/normalize.step';
export { personsStep, type PersonsStepResult } from './pipeline/persons.step';
export { toEventValues } from './pipeline/event-row';
// For bench/worker-floor.ts: the floor's inserts gather as the worker's do.
export { gatherWhileBusy } from './gather-while-busy';

export interface WorkerDeps {
  bus: EventBus;
  topics: Topics;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  clickhouseLayout?: ClickHouseLayout;
  db: MetadataStore;
  scheduler: JobScheduler;
  logger: Logger;
  metrics: Metrics;
  consumer?: WorkerConsumerOptions;
  /** Told which projects' persons or groups each committed run wrote; absent: nobody is told. */
  personChanges?: PersonChangeNotifier;
}

export interface WorkerConsumerOptions {
  /** Most events per pipeline run (one commit; runs started together share a ClickHouse insert). */
  batchSize?: number;
  /** Kafka session timeout: how soon a crashed worker's partitions move to another. */
  sessionTimeoutMs?: number;
  /** No progress for this long while messages wait: the liveness check fails (WORKER_STALL_TIMEOUT_MS). */
  stallTimeoutMs?: number;
  /** The live events lag of this worker's partitions growing this long: readiness fails (WORKER_LAG_READINESS_TIMEOUT_MS; 0: never). */
  lagReadinessTimeoutMs?: number;
  /** How often the consumer lag is read (default: a tenth of the readiness timeout, within 1–15 s). */
  lagPollMs?: number;
  /**
   * Historical partitions handled at once (default 1: historical imports take at most one of
   * the worker's partition slots). The embedded service, whose in-process bus has two
   * partitions and nothing else to share them with, takes both.
   */
  historicalConcurrency?: number;
  /**
   * Gather concurrent runs into one persons transaction and one ClickHouse insert per table (up
   * to `batchSize` events; see EventsConsumerDeps.gatherRuns). The embedded service turns it on:
   * PGlite and chdb run one call at a time and pay a fixed cost per call.
   */
  gatherRuns?: boolean;
  /**
   * Gather concurrent runs' rows into one ClickHouse insert (up to 4 × `batchSize` events, a run
   * of each partition consumed at once; see EventsConsumerDeps.gatherWrites), their persons
   * transactions still side by side. Default on:
   * each insert is a part ClickHouse writes and later merges, and costs the same fixed work
   * whatever its size, so the runs of one fetch's partitions write together.
   */
  gatherWrites?: boolean;
}

export interface Worker {
  start(): Promise<void>;
  /** Finishes the batches in hand, commits them, stops the jobs. */
  stop(): Promise<void>;
  /** A consumer loop that has not progressed for this long is reported dead. */
  liveness: HealthCheck[];
  /** Not ready until every consumer has joined its group and the jobs are registered. */
  readiness: HealthCheck[];
}

/** Live events partitions a worker consumes at once. */
const LIVE_PARTITIONS_AT_ONCE = 4;

/**
 * Most events one gathered ClickHouse insert takes: every run of a fetch, a run per partition
 * consumed at once. chdb spent less per row on one insert of a 20,000-event fetch than on two of
 * 10,000 (docs/scaling.md, "Personless worker: where its CPU goes").
 */
export const gatheredInsertMaxEvents = (batchSize: number): number => LIVE_PARTITIONS_AT_ONCE * batchSize;

export function createWorker(deps: WorkerDeps): Worker {
  const subscriptions: MonitoredSubscription[] = [];
  let started = false;
  const resolveTeam = createProjectTokenCache(deps.db);
  // One pipeline per topic: live and historical batches never share a run.
  const {
    batchSize,
    sessionTimeoutMs,
    stallTimeoutMs = workerConsumerEnv.WORKER_STALL_TIMEOUT_MS.default,
    historicalConcurrency = 1,
    lagReadinessTimeoutMs = workerConsumerEnv.WORKER_LAG_READINESS_TIMEOUT_MS.default,
    lagPollMs = Math.min(15_000, Math.max(1_000, Math.round((lagReadinessTimeoutMs || 150_000) / 10))),
    gatherRuns = false,
    gatherWrites = true,
  } = deps.consumer ?? {};
  const eventsConsumer = () =>
    createEventsConsumer({
      ...deps,
      resolveTeam,
      gatherRuns: gatherRuns ? { maxEvents: batchSize ?? workerConsumerEnv.WORKER_BATCH_SIZE.default } : undefined,
      gatherWrites: gatherWrites ? { maxEvents: gatheredInsertMaxEvents(batchSize ?? workerConsumerEnv.WORKER_BATCH_SIZE.default) } : undefined,
    });
  // Historical imports queue up by design: only the live events' lag decides readiness.
  const lag = createLagMonitor({
    subscriptions: () => subscriptions,
    metrics: deps.metrics,
    logger: deps.logger,
    pollMs: lagPollMs,
    readinessConsumer: 'events',
    readinessTimeoutMs: lagReadinessTimeoutMs,
  });

  return {
    async start() {
      const { topics } = deps;
      // Separate groups: historical migrations never hold up live events. Historical
      // partitions are handled one at a time (strictly in order, and at most one of the
      // worker's partition slots), live ones four at a time. The groups join in parallel.
      const consumers: { name: string; topic: string; handler: BatchHandler; concurrency: number }[] = [
        { name: 'events', topic: topics.events, handler: eventsConsumer(), concurrency: LIVE_PARTITIONS_AT_ONCE },
        { name: 'events-historical', topic: topics.eventsHistorical, handler: eventsConsumer(), concurrency: historicalConcurrency },
        { name: 'dead-letters', topic: topics.deadLetter, handler: createDeadLettersConsumer(deps.ch), concurrency: 1 },
      ];
      subscriptions.push(
        ...(await Promise.all(
          consumers.map(async ({ name, topic, handler: h, concurrency }) => ({
            name,
            groupId: `${topic}-writer`,
            topic,
            sub: await deps.bus.subscribe({ groupId: `${topic}-writer`, topic, handler: h, concurrency, maxBatchSize: batchSize, sessionTimeoutMs }),
          })),
        )),
      );
      await deps.scheduler.register(createPersonEventsDeletionJob(deps));
      lag.start();
      started = true;
      deps.logger.info({ topics }, 'worker consuming');
    },
    async stop() {
      lag.stop();
      await Promise.all(subscriptions.map(({ sub }) => sub.stop()));
      await deps.scheduler.close();
    },
    liveness: [
      {
        name: 'consumers',
        check: () => {
          const stalled = subscriptions.filter(({ sub }) => sub.idleMs() > stallTimeoutMs).map(({ name }) => name);
          if (stalled.length > 0) throw new Error(`no progress for ${stallTimeoutMs / 1000}s: ${stalled.join(', ')}`);
        },
      },
    ],
    readiness: [
      {
        name: 'consumers',
        check: () => {
          if (!started) throw new Error('consumers are joining their groups');
        },
      },
      lag.readiness,
    ],
  };
}

/** The worker's own HTTP surface: health, readiness and metrics. */
export function createWorkerHttpApp(deps: {
  worker: Worker;
  readiness: HealthCheck[];
  isShuttingDown: () => boolean;
  logger: Logger;
  metrics: Metrics;
}): Express {
  return createServiceApp({
    ...deps,
    name: 'worker',
    liveness: deps.worker.liveness,
    readiness: [...deps.worker.readiness, ...deps.readiness],
    routers: [],
  });
}
