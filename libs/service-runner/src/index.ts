import type { RequestListener } from 'node:http';
import { createEventBus, type EventBus } from '@sightline/bus';
import { clickhouseLayout, createAnalyticsStore, migrateClickHouse, type ClickHouseClient, type ClickHouseLayout } from '@sightline/clickhouse';
import { parseConfig, type EnvSpec } from '@sightline/config';
import { installShutdown, listen, requestTimeoutsFromConfig, type RunningServer } from '@sightline/http';
import { createLogger, type Logger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { exitOnFatalErrors } from './fatal-errors';

/** The settings every service reads (runtimeEnv in libs/config). */
interface RuntimeConfig {
  LOG_LEVEL: string;
  HOST: string;
  PORT: number;
  SHUTDOWN_TIMEOUT_MS: number;
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_BODY_IDLE_TIMEOUT_MS: number;
}

/** Store settings (postgresEnv, clickhouseServerEnv in libs/config), read when a service opens a store. */
interface StoreConfig {
  DATABASE_URL?: string;
  DATABASE_POOL_SIZE: number;
  CLICKHOUSE_URL?: string;
  CLICKHOUSE_USER: string;
  CLICKHOUSE_PASSWORD: string;
  CLICKHOUSE_DATABASE: string;
  CLICKHOUSE_CLUSTER?: string;
}

/** Bus settings (kafkaEnv, ingestEnv in libs/config), read when a service opens the bus. */
interface BusConfig {
  KAFKA_BROKERS?: string;
  KAFKA_CLIENT_ID: string;
  BUS_SEND_TIMEOUT_MS: number;
  KAFKA_PRODUCER_IDEMPOTENT: boolean;
  KAFKA_PRODUCE_REQUEST_MAX_BYTES: number;
  /** Only services that capture set it (the worker's producer writes dead letters alone). */
  BUS_PRODUCER_LINGER_MS?: number;
}

/** What a service's `start` is handed: its parsed configuration and the shared pieces, ready to use. */
export interface ServiceContext<C> {
  config: C;
  logger: Logger;
  metrics: Metrics;
  /** True once shutdown began: health answers 503 and captures ask clients to close. */
  isShuttingDown(): boolean;
  /** PostgreSQL at DATABASE_URL (else PGlite under `dataDir`), migrated; closed at shutdown. */
  openMetadataStore(options?: { dataDir?: string }): Promise<MetadataStore>;
  /** ClickHouse at CLICKHOUSE_URL (else chdb under `dataDir`), migrated; closed at shutdown. */
  openAnalyticsStore(options?: { dataDir?: string }): Promise<ClickHouseClient>;
  /** How the analytics tables are laid out (CLICKHOUSE_CLUSTER): what queries and mutations are built for. */
  analyticsLayout: ClickHouseLayout;
  /**
   * The same store, for requests' reads, once openAnalyticsStore has opened (and migrated) it.
   * Embedded, a connection of its own: the engine runs one query at a time per connection, and
   * the worker's inserts, which capture waits for, must not queue behind a long analytics read.
   * Over HTTP, the one client (it keeps a pool of sockets).
   */
  openAnalyticsReader(store: ClickHouseClient, options?: { dataDir?: string }): ClickHouseClient;
  /**
   * Kafka at KAFKA_BROKERS (or the in-process bus), from the KAFKA_* and BUS_* settings; the
   * client id gets `clientIdSuffix`. Closed at shutdown after the pieces opened later (its
   * producer is flushed).
   */
  openEventBus(options?: { clientIdSuffix?: string }): EventBus;
  /** Runs `stop` at shutdown: everything registered is stopped in the reverse order of registration. */
  onStop(stop: () => Promise<void>): void;
}

/**
 * Partitions per topic of the in-process bus: two let the worker write one batch to ClickHouse
 * while the next is in PostgreSQL (each key stays in one partition, so its order holds).
 */
export const EMBEDDED_BUS_PARTITIONS = 2;

export interface StartedService {
  app: RequestListener;
  /** Called once the server listens (a worker joins its consumer groups here, health already answering). */
  afterListen?(server: RunningServer): Promise<void> | void;
}

/**
 * Starts a service the way every Sightline process starts: configuration parsed once (all
 * problems listed together), logger, metrics, stores opened and migrated, the HTTP server with
 * its timeouts, and on SIGTERM/SIGINT a graceful stop under SHUTDOWN_TIMEOUT_MS: the server
 * first (in-flight requests finish), then what `start` opened, newest first.
 */
export function runService<E extends EnvSpec, R extends keyof E & string = never>(options: {
  name: string;
  env: E;
  required?: readonly R[];
  start(context: ServiceContext<ReturnType<typeof parseConfig<E, R>>>): Promise<StartedService>;
}): void {
  const run = async () => {
    const config = parseConfig(options.env, process.env, options.required ?? []);
    const runtime = config as unknown as RuntimeConfig;
    const stores = config as unknown as StoreConfig;
    const bus = config as unknown as BusConfig;
    const logger = createLogger({ service: options.name, level: runtime.LOG_LEVEL });
    exitOnFatalErrors((err, origin) => logger.fatal({ err, origin }, `${origin}: exiting`));
    const metrics = createMetrics({ defaultMetrics: true });
    let shuttingDown = false;
    const stops: (() => Promise<void>)[] = [];
    const analyticsLayout = clickhouseLayout(stores.CLICKHOUSE_CLUSTER, stores.CLICKHOUSE_DATABASE);
    const context: ServiceContext<typeof config> = {
      config,
      logger,
      metrics,
      isShuttingDown: () => shuttingDown,
      analyticsLayout,
      async openMetadataStore(store = {}) {
        const db = await createMetadataStore({
          url: stores.DATABASE_URL,
          dataDir: store.dataDir,
          poolSize: stores.DATABASE_POOL_SIZE,
          // The embedded PostgreSQL's thread gone: nothing can be stored again, so end at once and non-zero.
          onLost: (err) => {
            logger.fatal({ err }, 'embedded PostgreSQL lost: exiting');
            process.exit(1);
          },
        });
        stops.push(() => db.close());
        await migratePostgres(db);
        return db;
      },
      async openAnalyticsStore(store = {}) {
        const ch = createAnalyticsStore({
          url: stores.CLICKHOUSE_URL,
          user: stores.CLICKHOUSE_USER,
          password: stores.CLICKHOUSE_PASSWORD,
          database: stores.CLICKHOUSE_DATABASE,
          dataDir: store.dataDir,
          layout: analyticsLayout,
        });
        stops.push(() => ch.close());
        await migrateClickHouse(ch, { layout: analyticsLayout });
        return ch;
      },
      openAnalyticsReader(store, options = {}) {
        if (stores.CLICKHOUSE_URL) return store;
        const reader = createAnalyticsStore({
          user: stores.CLICKHOUSE_USER,
          password: stores.CLICKHOUSE_PASSWORD,
          database: stores.CLICKHOUSE_DATABASE,
          dataDir: options.dataDir,
        });
        stops.push(() => reader.close());
        return reader;
      },
      openEventBus(options = {}) {
        const eventBus = createEventBus(
          {
            brokers: bus.KAFKA_BROKERS,
            clientId: `${bus.KAFKA_CLIENT_ID}${options.clientIdSuffix ?? ''}`,
            sendTimeoutMs: bus.BUS_SEND_TIMEOUT_MS,
            idempotent: bus.KAFKA_PRODUCER_IDEMPOTENT,
            lingerMs: bus.BUS_PRODUCER_LINGER_MS,
            maxRequestBytes: bus.KAFKA_PRODUCE_REQUEST_MAX_BYTES,
            inProcessPartitions: EMBEDDED_BUS_PARTITIONS,
          },
          logger,
        );
        stops.push(() => eventBus.close());
        return eventBus;
      },
      onStop(stop) {
        stops.push(stop);
      },
    };
    const started = await options.start(context);
    const server = await listen(started.app, { host: runtime.HOST, port: runtime.PORT, timeouts: requestTimeoutsFromConfig(runtime) });
    await started.afterListen?.(server);
    installShutdown({
      logger,
      deadlineMs: runtime.SHUTDOWN_TIMEOUT_MS,
      stop: async () => {
        shuttingDown = true;
        await server.close();
        for (const stop of stops.reverse()) await stop();
      },
    });
  };
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
export * from './embedded-service-marker';
export * from './fatal-errors';
