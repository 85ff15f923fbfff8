import { resolve } from 'node:path';
import { bootstrapInstance, formatBootstrapBanner } from '@sightline/accounts';
import { createEventBus, topicNames } from '@sightline/bus';
import { assertClickHouseMigrated, createAnalyticsStore, migrateClickHouse } from '@sightline/clickhouse';
import { allInOneEnv, parseConfig } from '@sightline/config';
import { openGeoIp } from '@sightline/geoip';
import { installShutdown, listen, requestTimeoutsFromConfig } from '@sightline/http';
import { createJobScheduler } from '@sightline/jobs';
import { createLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { assertPostgresMigrated, createMetadataStore, migratePostgres } from '@sightline/postgres';
import { createAllInOne } from './all-in-one';

async function main() {
  const started = Date.now();
  const config = parseConfig(allInOneEnv, process.env);
  const logger = createLogger({ service: 'sightline', level: config.LOG_LEVEL });
  const metrics = createMetrics({ defaultMetrics: true });
  const dataDir = resolve(config.SIGHTLINE_DATA_DIR);
  // Each store is embedded unless its server URL is configured (see the adapter factories).
  const db = await createMetadataStore({ url: config.DATABASE_URL, dataDir });
  await migratePostgres(db);
  const ch = createAnalyticsStore({
    url: config.CLICKHOUSE_URL,
    user: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database: config.CLICKHOUSE_DATABASE,
    dataDir,
  });
  await migrateClickHouse(ch);
  const setup = await bootstrapInstance(db, { projectApiKey: config.SIGHTLINE_PROJECT_API_KEY, personalApiKey: config.SIGHTLINE_PERSONAL_API_KEY });
  const bus = createEventBus(
    {
      brokers: config.KAFKA_BROKERS,
      clientId: config.KAFKA_CLIENT_ID,
      sendTimeoutMs: config.BUS_SEND_TIMEOUT_MS,
      idempotent: config.KAFKA_PRODUCER_IDEMPOTENT,
      lingerMs: config.BUS_PRODUCER_LINGER_MS,
    },
    logger,
  );
  const scheduler = createJobScheduler({ redisUrl: config.REDIS_URL }, logger);
  let shuttingDown = false;
  const { app, worker } = createAllInOne({
    db,
    ch,
    bus,
    topics: topicNames(config.KAFKA_TOPIC_PREFIX),
    scheduler,
    logger,
    metrics,
    sendTimeoutMs: config.BUS_SEND_TIMEOUT_MS,
    consumer: { batchSize: config.WORKER_BATCH_SIZE, sessionTimeoutMs: config.WORKER_KAFKA_SESSION_TIMEOUT_MS },
    maxInflightRequests: config.GATEWAY_MAX_INFLIGHT_REQUESTS,
    readiness: [
      { name: 'postgres', check: () => assertPostgresMigrated(db) },
      { name: 'clickhouse', check: () => assertClickHouseMigrated(ch) },
      { name: 'bus', check: () => bus.ping() },
    ],
    isShuttingDown: () => shuttingDown,
    geoip: await openGeoIp(config.GEOIP_DATABASE_PATH),
    flagsStoreTimeoutMs: config.FLAGS_STORE_TIMEOUT_MS,
  });
  await worker.start();
  const server = await listen(app, { host: config.HOST, port: config.PORT, timeouts: requestTimeoutsFromConfig(config) });
  const url = `http://localhost:${server.port}`;
  if (setup.created) process.stdout.write(formatBootstrapBanner(setup, url) + '\n');
  logger.info({ url, dataDir, projectApiKey: setup.projectApiKey, startupMs: Date.now() - started }, `Sightline listening on ${url}`);
  installShutdown({
    logger,
    deadlineMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      shuttingDown = true;
      await server.close(); // in-flight captures finish: their events are written first
      await worker.stop();
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
