import { bootstrapInstance, formatBootstrapBanner } from '@sightline/accounts';
import { assertClickHouseMigrated, createAnalyticsStore, migrateClickHouse } from '@sightline/clickhouse';
import { apiEnv, parseConfig, requiredInDistributedMode } from '@sightline/config';
import { createFlagDefinitionsCache, createInMemoryInvalidation, createRedisInvalidation } from '@sightline/flag-definitions';
import { openGeoIp } from '@sightline/geoip';
import { installShutdown, listen, requestTimeoutsFromConfig } from '@sightline/http';
import { createLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { assertPostgresMigrated, createMetadataStore, migratePostgres } from '@sightline/postgres';
import { createApiApp } from './app';

async function main() {
  const config = parseConfig(apiEnv, process.env, requiredInDistributedMode.api);
  const logger = createLogger({ service: 'api', level: config.LOG_LEVEL });
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
  const setup = await bootstrapInstance(db, { projectApiKey: config.SIGHTLINE_PROJECT_API_KEY, personalApiKey: config.SIGHTLINE_PERSONAL_API_KEY });
  // Every api process subscribes, so a flag change reaches decide everywhere within a second.
  const flagDefinitions = createFlagDefinitionsCache({
    db,
    channel: config.REDIS_URL ? createRedisInvalidation(config.REDIS_URL) : createInMemoryInvalidation(),
    onError: (err, context) => logger.warn({ err }, context),
  });
  await flagDefinitions.ready;
  const geoip = await openGeoIp(config.GEOIP_DATABASE_PATH);
  let shuttingDown = false;
  const app = createApiApp({
    db,
    ch,
    logger,
    metrics,
    flagDefinitions,
    geoip,
    flagsStoreTimeoutMs: config.FLAGS_STORE_TIMEOUT_MS,
    readiness: [
      { name: 'postgres', check: () => assertPostgresMigrated(db) },
      { name: 'clickhouse', check: () => assertClickHouseMigrated(ch) },
    ],
    isShuttingDown: () => shuttingDown,
  });
  const server = await listen(app, { host: config.HOST, port: config.PORT, timeouts: requestTimeoutsFromConfig(config) });
  const baseUrl = `http://localhost:${server.port}`;
  if (setup.created) process.stdout.write(formatBootstrapBanner(setup, baseUrl) + '\n');
  logger.info({ port: server.port, projectApiKey: setup.projectApiKey }, `api listening on ${baseUrl}`);
  installShutdown({
    logger,
    deadlineMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      shuttingDown = true;
      await server.close();
      await flagDefinitions.close();
      await ch.close();
      await db.close();
    },
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
