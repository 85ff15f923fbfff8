import { createProjectTokenCache } from '@sightline/accounts';
import { topicNames } from '@sightline/bus';
import { gatewayEnv, requiredInDistributedMode } from '@sightline/config';
import { runService } from '@sightline/service-runner';
import { createGatewayApp, createProjectKeyResolver } from './app';

runService({
  name: 'gateway',
  env: gatewayEnv,
  required: requiredInDistributedMode.gateway,
  async start({ config, logger, metrics, isShuttingDown, openMetadataStore, openEventBus }) {
    const db = await openMetadataStore();
    // Stopped before the store: closing flushes the producer, after in-flight requests got their acknowledgement.
    const bus = openEventBus({ clientIdSuffix: '-gateway' });
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
      isShuttingDown,
    });
    return {
      app,
      afterListen: (server) => logger.info({ port: server.port }, `gateway listening on http://${config.HOST}:${server.port}`),
    };
  },
});
