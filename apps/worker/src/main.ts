import { createRedisInvalidation, topicNames } from '@sightline/bus';
import { assertClickHouseMigrated } from '@sightline/clickhouse';
import { requiredInDistributedMode, workerEnv } from '@sightline/config';
import { createJobScheduler } from '@sightline/jobs';
import { createPersonChangeNotifier, PERSON_CHANGES_CHANNEL, personChangeCodec } from '@sightline/persons';
import { runService } from '@sightline/service-runner';
import { createWorker, createWorkerHttpApp } from './worker';

runService({
  name: 'worker',
  env: workerEnv,
  required: requiredInDistributedMode.worker,
  async start({ config, logger, metrics, isShuttingDown, analyticsLayout, openMetadataStore, openAnalyticsStore, openEventBus, onStop }) {
    const db = await openMetadataStore();
    const ch = await openAnalyticsStore();
    const bus = openEventBus({ clientIdSuffix: '-worker' });
    const scheduler = createJobScheduler({ redisUrl: config.REDIS_URL }, logger);
    // Every api process drops its cached answers of the persons the worker wrote (decide sees a $set at once).
    const personChannel = config.REDIS_URL ? createRedisInvalidation(config.REDIS_URL, { channel: PERSON_CHANGES_CHANNEL, codec: personChangeCodec }) : null;
    if (personChannel) onStop(() => personChannel.close());
    const worker = createWorker({
      bus,
      topics: topicNames(config.KAFKA_TOPIC_PREFIX),
      ch,
      clickhouseLayout: analyticsLayout,
      db,
      scheduler,
      logger,
      metrics,
      personChanges: personChannel ? createPersonChangeNotifier(personChannel, (err) => logger.warn({ err }, 'announcing person changes')) : undefined,
      consumer: {
        batchSize: config.WORKER_BATCH_SIZE,
        sessionTimeoutMs: config.WORKER_KAFKA_SESSION_TIMEOUT_MS,
        stallTimeoutMs: config.WORKER_STALL_TIMEOUT_MS,
        lagReadinessTimeoutMs: config.WORKER_LAG_READINESS_TIMEOUT_MS,
      },
    });
    // Stopped first: the chunk in hand is finished and committed while the stores are still open.
    onStop(() => worker.stop());
    const app = createWorkerHttpApp({
      worker,
      readiness: [
        { name: 'postgres', check: () => db.ping() },
        { name: 'clickhouse', check: () => assertClickHouseMigrated(ch) },
        { name: 'bus', check: () => bus.ping() },
      ],
      isShuttingDown,
      logger,
      metrics,
    });
    return {
      app,
      // Health answers (503 until ready) while the consumer groups join.
      afterListen: async (server) => {
        logger.info({ port: server.port }, `worker health on http://${config.HOST}:${server.port}`);
        await worker.start();
      },
    };
  },
});
