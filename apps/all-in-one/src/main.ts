import { resolve } from 'node:path';
import { bootstrapInstance, formatBootstrapBanner, formatPasswordSetupBanner, issueFirstStartPasswordToken } from '@sightline/accounts';
import { topicNames } from '@sightline/bus';
import { assertClickHouseMigrated } from '@sightline/clickhouse';
import { allInOneEnv } from '@sightline/config';
import { openGeoIp } from '@sightline/geoip';
import { accessOptionsFromConfig, analyticsOptionsFromConfig } from '@sightline/api';
import { createJobScheduler } from '@sightline/jobs';
import { assertPostgresMigrated } from '@sightline/postgres';
import { EMBEDDED_BUS_PARTITIONS, runService, writeEmbeddedServiceMarker } from '@sightline/service-runner';

const started = Date.now();

runService({
  name: 'sightline',
  env: allInOneEnv,
  async start({ config, logger, metrics, isShuttingDown, analyticsLayout, openMetadataStore, openAnalyticsStore, openAnalyticsReader, openEventBus, onStop }) {
    const dataDir = resolve(config.SIGHTLINE_DATA_DIR);
    // Each store is embedded unless its server URL is configured (see the adapter factories).
    // The stores open side by side with the GeoIP database, and the routers load while PGlite
    // starts (its WebAssembly compiles off the main thread): about a third of a restart.
    const [db, ch, geoip, { createAllInOne }] = await Promise.all([
      openMetadataStore({ dataDir }),
      openAnalyticsStore({ dataDir }),
      openGeoIp(config.GEOIP_DATABASE_PATH),
      // required, not imported: the same CommonJS module instances as the rest of the process.
      Promise.resolve().then(() => require('./all-in-one') as typeof import('./all-in-one')),
    ]);
    const setup = await bootstrapInstance(db, { projectApiKey: config.SIGHTLINE_PROJECT_API_KEY, personalApiKey: config.SIGHTLINE_PERSONAL_API_KEY });
    // Until someone has chosen a password, a start prints a one-time link to do it: a fresh one on
    // every start with the embedded PostgreSQL (this process alone owns it), else only while none
    // is usable, so all-in-one processes sharing a PostgreSQL do not cancel each other's link.
    const passwordToken = await issueFirstStartPasswordToken(db, Date.now(), { replaceUnused: !config.DATABASE_URL });
    const bus = openEventBus();
    const scheduler = createJobScheduler({ redisUrl: config.REDIS_URL }, logger);
    const access = accessOptionsFromConfig(config, logger);
    onStop(() => access.close());
    const { app, worker } = createAllInOne({
      db,
      ch,
      clickhouseLayout: analyticsLayout,
      analyticsReads: openAnalyticsReader(ch, { dataDir }),
      bus,
      topics: topicNames(config.KAFKA_TOPIC_PREFIX),
      scheduler,
      logger,
      metrics,
      sendTimeoutMs: config.BUS_SEND_TIMEOUT_MS,
      consumer: {
        batchSize: config.WORKER_BATCH_SIZE,
        sessionTimeoutMs: config.WORKER_KAFKA_SESSION_TIMEOUT_MS,
        stallTimeoutMs: config.WORKER_STALL_TIMEOUT_MS,
        lagReadinessTimeoutMs: config.WORKER_LAG_READINESS_TIMEOUT_MS,
        // The in-process bus's partitions serve nobody else: an import uses both (see EMBEDDED_BUS_PARTITIONS).
        historicalConcurrency: config.KAFKA_BROKERS ? 1 : EMBEDDED_BUS_PARTITIONS,
        // Not gathering runs (EventsConsumerDeps.gatherRuns): it costs less CPU per event but ends
        // slower end to end (bench:embedded), the gathered steps waiting on each other; the option
        // stays for a version that overlaps them.
        gatherRuns: false,
        // Left as the embedded service was measured (bench:embedded); the distributed worker gathers writes.
        gatherWrites: false,
      },
      maxInflightRequests: config.GATEWAY_MAX_INFLIGHT_REQUESTS,
      readiness: [
        { name: 'postgres', check: () => assertPostgresMigrated(db) },
        { name: 'clickhouse', check: () => assertClickHouseMigrated(ch) },
        { name: 'bus', check: () => bus.ping() },
      ],
      isShuttingDown,
      geoip,
      flagsStoreTimeoutMs: config.FLAGS_STORE_TIMEOUT_MS,
      insightCacheTtlMs: config.INSIGHT_CACHE_TTL_SECONDS * 1000,
      analytics: analyticsOptionsFromConfig(config),
      flagsPersonCacheMs: config.FLAGS_PERSON_CACHE_MS,
      access: access.access,
      trustProxy: access.trustProxy,
    });
    // After the server closed (in-flight captures are written first), before the bus and stores.
    onStop(() => worker.stop());
    await worker.start();
    return {
      app,
      afterListen: (server) => {
        const url = `http://localhost:${server.port}`;
        // `npm run jobs` finds the service holding the embedded stores here and goes through it.
        if (!config.DATABASE_URL || !config.CLICKHOUSE_URL) {
          const host = ['0.0.0.0', '::', ''].includes(config.HOST) ? '127.0.0.1' : config.HOST;
          const removeMarker = writeEmbeddedServiceMarker(dataDir, { url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}` });
          onStop(async () => removeMarker());
        }
        if (setup.created) process.stdout.write(formatBootstrapBanner(setup, url) + '\n');
        if (passwordToken) process.stdout.write(formatPasswordSetupBanner(url, passwordToken, !config.DATABASE_URL) + '\n');
        logger.info({ url, dataDir, projectApiKey: setup.projectApiKey, startupMs: Date.now() - started }, `Sightline listening on ${url}`);
      },
    };
  },
});
