import { createProjectKeyResolver, createGatewayApp } from './app';
import { createProjectTokenCache } from '@sightline/accounts';
import { createEventBus, topicNames } from '@sightline/bus';
import { gatewayEnv, parseConfig, requiredInDistributedMode } from '@sightline/config';
import { installShutdown, listen, requestTimeoutsFromConfig } from '@sightline/http';
import { createLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';

async function main() {
  const config = parseConfig(gatewayEnv, process.env, requiredInDistributedMode.gateway);
  const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
  const metrics = createMetrics({ defaultMetrics: true });
  const db = await createMetadataStore({ url: config.DATABASE_URL });
  await migratePostgres(db);
  const bus = createEventBus(
    {
      brokers: config.KAFKA_BROKERS,
      clientId: `${config.KAFKA_CLIENT_ID}-gateway`,
      sendTimeoutMs: config.BUS_SEND_TIMEOUT_MS,
      idempotent: config.KAFKA_PRODUCER_IDEMPOTENT,
      lingerMs: config.BUS_PRODUCER_LINGER_MS,
    },
    logger,
  );
  let shuttingDown = false;
  const app = createGatewayApp({
    bus,
    topics: topicNames(config.KAFKA_TOPIC_PREFIX),
    projectKeys: createProjectKeyResolver(createProjectTokenCache(db)),
    logger,
    metrics,
    sendTimeoutMs: config.BUS_SEND_TIMEOUT_MS,
    maxInflightRequests: config.GATEWAY_MAX_INFLIGHT_REQUESTS,
    readiness: [
      { name: 'postgres', check: () => db.ping() },
      { name: 'bus', check: () => bus.ping() },
    ],
    isShuttingDown: () => shuttingDown,
  });
  const server = await listen(app, { host: config.HOST, port: config.PORT, timeouts: requestTimeoutsFromConfig(config) });
  logger.info({ port: server.port }, `gateway listening on http://${config.HOST}:${server.port}`);
  installShutdown({
    logger,
    deadlineMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      shuttingDown = true;
      await server.close(); // in-flight requests finish and get their bus acknowledgement
      await bus.close(); // flushes the producer
      await db.close();
    },
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
