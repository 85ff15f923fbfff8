import { createEventBus, topicNames } from '@sightline/bus';
import { assertClickHouseMigrated, createAnalyticsStore, migrateClickHouse } from '@sightline/clickhouse';
import { parseConfig, requiredInDistributedMode, workerEnv } from '@sightline/config';
import { installShutdown, listen, requestTimeoutsFromConfig } from '@sightline/http';
import { createJobScheduler } from '@sightline/jobs';
import { createLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { createWorker, createWorkerHttpApp } from './worker';

async function main() {
  const config = parseConfig(workerEnv, process.env, requiredInDistributedMode.worker);
  const logger = createLogger({ service: 'worker', level: config.LOG_LEVEL });
  const metrics = createMetrics({ defaultMetrics: true });
  const db = await createMetadataStore({ url: config.DATABASE_URL });
  await migratePostgres(db);
  const ch = createAnalyticsStore({
    url: config.CLICKHOUSE_URL,
    user: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database: config.CLICKHOUSE_DATABASE,
  });
  await migrateClickHouse(ch);
  const bus = createEventBus(
    {
      brokers: config.KAFKA_BROKERS,
      clientId: `${config.KAFKA_CLIENT_ID}-worker`,
      sendTimeoutMs: config.BUS_SEND_TIMEOUT_MS,
      idempotent: config.KAFKA_PRODUCER_IDEMPOTENT,
    },
    logger,
  );
  const scheduler = createJobScheduler({ redisUrl: config.REDIS_URL }, logger);
  const worker = createWorker({
    bus,
    topics: topicNames(config.KAFKA_TOPIC_PREFIX),
    ch,
    db,
    scheduler,
    logger,
    metrics,
    consumer: { batchSize: config.WORKER_BATCH_SIZE, sessionTimeoutMs: config.WORKER_KAFKA_SESSION_TIMEOUT_MS },
  });
  let shuttingDown = false;
  const app = createWorkerHttpApp({
    worker,
    readiness: [
      { name: 'postgres', check: () => db.ping() },
      { name: 'clickhouse', check: () => assertClickHouseMigrated(ch) },
      { name: 'bus', check: () => bus.ping() },
    ],
    isShuttingDown: () => shuttingDown,
    logger,
    metrics,
  });
  // Health answers (503 until ready) while the consumer groups join.
  const server = await listen(app, { host: config.HOST, port: config.PORT, timeouts: requestTimeoutsFromConfig(config) });
  logger.info({ port: server.port }, `worker health on http://${config.HOST}:${server.port}`);
  await worker.start();
  installShutdown({
    logger,
    deadlineMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      shuttingDown = true;
      await worker.stop();
      await server.close();
      await bus.close();
      await ch.close();
      await db.close();
    },
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
