import { createProjectTokenCache, PROJECT_TOKEN_CHANGES_CHANNEL } from '@sightline/accounts';
import { createRedisInvalidation, topicNames } from '@sightline/bus';
import { gatewayEnv, requiredInDistributedMode } from '@sightline/config';
import { runService } from '@sightline/service-runner';
import { createGatewayApp, createProjectKeyResolver } from './app';

runService({
  name: 'gateway',
  env: gatewayEnv,
  required: requiredInDistributedMode.gateway,
  async start({ config, logger, metrics, isShuttingDown, openMetadataStore, openEventBus, onStop }) {
    const db = await openMetadataStore();
    // A reset project API key is announced by the api over Redis: the token cache drops the old
    // key at once. Without REDIS_URL it is dropped when its cache entry expires (5 minutes).
    const tokenChanges = config.REDIS_URL ? createRedisInvalidation(config.REDIS_URL, { channel: PROJECT_TOKEN_CHANGES_CHANNEL }) : undefined;
    if (tokenChanges) onStop(() => tokenChanges.close());
    else logger.warn('REDIS_URL is not set: after a project API key reset this gateway accepts the old key for up to 5 minutes');
    const projectTokens = createProjectTokenCache(db, { changes: tokenChanges, onError: (err, context) => logger.warn({ err }, context) });
    // Stopped before the store: closing flushes the producer, after in-flight requests got their acknowledgement.
    const bus = openEventBus({ clientIdSuffix: '-gateway' });
    const app = createGatewayApp({
      bus,
      topics: topicNames(config.KAFKA_TOPIC_PREFIX),
      projectKeys: createProjectKeyResolver(projectTokens),
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
