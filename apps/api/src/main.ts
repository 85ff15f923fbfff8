import {
  bootstrapInstance,
  formatBootstrapBanner,
  formatPasswordSetupBanner,
  issueFirstStartPasswordToken,
  PRINCIPAL_CHANGES_CHANNEL,
  PROJECT_CHANGES_CHANNEL,
  PROJECT_TOKEN_CHANGES_CHANNEL,
} from '@sightline/accounts';
import { assertClickHouseMigrated } from '@sightline/clickhouse';
import { apiEnv, requiredInDistributedMode } from '@sightline/config';
import { createInMemoryInvalidation, createRedisInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache, FLAG_CHANGES_CHANNEL } from '@sightline/flag-store';
import { openGeoIp } from '@sightline/geoip';
import { createDecidePersonCache, PERSON_CHANGES_CHANNEL, personChangeCodec, type PersonChange } from '@sightline/persons';
import { assertPostgresMigrated } from '@sightline/postgres';
import { runService } from '@sightline/service-runner';
import { accessOptionsFromConfig, analyticsOptionsFromConfig, createApiApp } from './app';

runService({
  name: 'api',
  env: apiEnv,
  required: requiredInDistributedMode.api,
  async start({ config, logger, metrics, isShuttingDown, analyticsLayout, openMetadataStore, openAnalyticsStore, onStop }) {
    const db = await openMetadataStore();
    const ch = await openAnalyticsStore();
    const setup = await bootstrapInstance(db, { projectApiKey: config.SIGHTLINE_PROJECT_API_KEY, personalApiKey: config.SIGHTLINE_PERSONAL_API_KEY });
    // Until someone has chosen a password, one process prints a one-time link to do it; the others
    // (starting together, or later while it is unused) print none rather than cancel it.
    const passwordToken = await issueFirstStartPasswordToken(db, Date.now(), { replaceUnused: false });
    // Every api process subscribes, so a flag change reaches decide everywhere within a second.
    const flagDefinitions = createFlagDefinitionsCache({
      db,
      channel: config.REDIS_URL ? createRedisInvalidation(config.REDIS_URL, { channel: FLAG_CHANGES_CHANNEL }) : createInMemoryInvalidation(),
      onError: (err, context) => logger.warn({ err }, context),
    });
    onStop(() => flagDefinitions.close());
    // Answers dropped when a worker announces it wrote their persons, distinct ids or groups.
    const decidePersons = createDecidePersonCache({
      channel: config.REDIS_URL
        ? createRedisInvalidation(config.REDIS_URL, { channel: PERSON_CHANGES_CHANNEL, codec: personChangeCodec })
        : createInMemoryInvalidation<PersonChange>(),
      maxAgeMs: config.FLAGS_PERSON_CACHE_MS,
      onError: (err, context) => logger.warn({ err }, context),
    });
    onStop(() => decidePersons.close());
    // A reset project API key, announced to (and heard from) every api process and gateway.
    const projectTokenChanges = config.REDIS_URL
      ? createRedisInvalidation(config.REDIS_URL, { channel: PROJECT_TOKEN_CHANGES_CHANNEL })
      : createInMemoryInvalidation();
    onStop(() => projectTokenChanges.close());
    // A changed, rolled or deleted personal key, announced to (and heard from) every api process,
    // whose principal caches drop the user's keys (without Redis, each process's own time bound).
    const principalChanges = config.REDIS_URL
      ? createRedisInvalidation(config.REDIS_URL, { channel: PRINCIPAL_CHANGES_CHANNEL })
      : createInMemoryInvalidation();
    onStop(() => principalChanges.close());
    // A changed project (its settings, its API key), announced so every api process's project cache drops it.
    const projectChanges = config.REDIS_URL ? createRedisInvalidation(config.REDIS_URL, { channel: PROJECT_CHANGES_CHANNEL }) : createInMemoryInvalidation();
    onStop(() => projectChanges.close());
    await Promise.all([flagDefinitions.ready, decidePersons.ready]);
    const access = accessOptionsFromConfig(config, logger);
    onStop(() => access.close());
    const app = createApiApp({
      db,
      ch,
      clickhouseLayout: analyticsLayout,
      logger,
      metrics,
      flagDefinitions,
      decidePersons,
      projectTokenChanges,
      principalChanges,
      projectChanges,
      geoip: await openGeoIp(config.GEOIP_DATABASE_PATH),
      flagsStoreTimeoutMs: config.FLAGS_STORE_TIMEOUT_MS,
      insightCacheTtlMs: config.INSIGHT_CACHE_TTL_SECONDS * 1000,
      analytics: analyticsOptionsFromConfig(config),
      access: access.access,
      trustProxy: access.trustProxy,
      readiness: [
        { name: 'postgres', check: () => assertPostgresMigrated(db) },
        { name: 'clickhouse', check: () => assertClickHouseMigrated(ch) },
      ],
      isShuttingDown,
    });
    return {
      app,
      afterListen: (server) => {
        const baseUrl = `http://localhost:${server.port}`;
        if (setup.created) process.stdout.write(formatBootstrapBanner(setup, baseUrl) + '\n');
        if (passwordToken) process.stdout.write(formatPasswordSetupBanner(baseUrl, passwordToken, false) + '\n');
        logger.info({ port: server.port, projectApiKey: setup.projectApiKey }, `api listening on ${baseUrl}`);
      },
    };
  },
});
