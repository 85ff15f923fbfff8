import type { Express } from 'express';
import { createProjectTokenCache } from '@sightline/accounts';
import type { EventBus, Subscription, Topics } from '@sightline/bus';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { createServiceApp, type HealthCheck } from '@sightline/http';
import type { JobScheduler } from '@sightline/jobs';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { createDeadLettersConsumer } from './dead-letters.consumer';
import { createEventsConsumer } from './events.consumer';
import { createPersonEventsDeletionJob } from './jobs/person-events-deletion.job';

export { runPersonEventsDeletion, PERSON_EVENTS_DELETION_CRON } from './jobs/person-events-deletion.job';

export interface WorkerDeps {
  bus: EventBus;
  topics: Topics;
  ch: ClickHouseClient;
  db: MetadataStore;
  scheduler: JobScheduler;
  logger: Logger;
  metrics: Metrics;
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

const STALLED_AFTER_MS = 120_000;

export function createWorker(deps: WorkerDeps): Worker {
  const subscriptions: { name: string; sub: Subscription }[] = [];
  let started = false;
  const resolveTeam = createProjectTokenCache(deps.db);
  const handler = createEventsConsumer({ ch: deps.ch, bus: deps.bus, topics: deps.topics, resolveTeam, metrics: deps.metrics, logger: deps.logger });

  return {
    async start() {
      const { topics } = deps;
      // Separate groups: historical migrations never hold up live events. The groups join
      // in parallel (each join takes a few seconds).
      const consumers = [
        ['events', topics.events, handler],
        ['events-historical', topics.eventsHistorical, handler],
        ['dead-letters', topics.deadLetter, createDeadLettersConsumer(deps.ch)],
      ] as const;
      subscriptions.push(
        ...(await Promise.all(
          consumers.map(async ([name, topic, h]) => ({ name, sub: await deps.bus.subscribe({ groupId: `${topic}-writer`, topic, handler: h }) })),
        )),
      );
      await deps.scheduler.register(createPersonEventsDeletionJob(deps));
      started = true;
      deps.logger.info({ topics }, 'worker consuming');
    },
    async stop() {
      await Promise.all(subscriptions.map(({ sub }) => sub.stop()));
      await deps.scheduler.close();
    },
    liveness: [
      {
        name: 'consumers',
        check: () => {
          const stalled = subscriptions.filter(({ sub }) => sub.idleMs() > STALLED_AFTER_MS).map(({ name }) => name);
          if (stalled.length > 0) throw new Error(`no progress for ${STALLED_AFTER_MS / 1000}s: ${stalled.join(', ')}`);
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
