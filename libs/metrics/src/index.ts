import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The metrics of one process. Each app gets its own registry (so tests can build
 * several apps in one process) and registers only what it uses.
 */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'app' | 'route' | 'method' | 'status'>;
  httpDuration: Histogram<'app' | 'route'>;
  eventsAccepted: Counter<'route'>;
  eventsDropped: Counter<'reason'>;
  projectKeyLookupsFailedOpen: Counter;
  eventsWritten: Counter<'topic'>;
  busSendDuration: Histogram<'topic'>;
  consumerBatches: Counter<'topic' | 'result'>;
  ingestionWarnings: Counter<'type'>;
  deadLetters: Counter<'step'>;
  pipelineStepDuration: Histogram<'step'>;
  jobRuns: Counter<'job' | 'result'>;
  /** Messages a consumer group has not committed past, per partition this process consumes. */
  consumerLag: Gauge<'group' | 'topic' | 'partition'>;
  /** A consumer group's lag over all partitions of its topic, as this process reads it. */
  consumerGroupLag: Gauge<'group' | 'topic'>;
  /** How long the lag of this process's partitions has kept growing (0: not growing). */
  consumerLagGrowingSeconds: Gauge<'group'>;
  insightTimeToSeeData: Histogram<'type' | 'context' | 'status'>;
  /** Time to compute an insight's answer in ClickHouse (cache hits are not counted), by kind. */
  insightQueryDuration: Histogram<'kind' | 'result'>;
  /** Time of one ClickHouse analytics read (queryClickhouse), by query kind and outcome. */
  clickhouseQueryDuration: Histogram<'kind' | 'result'>;
  /** Management requests answered 429, by throttle class. */
  requestsThrottled: Counter<'throttle'>;
  /** Management requests let through unthrottled because the limiter's store (Redis) failed. */
  rateLimitFailedOpen: Counter;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['app', 'route', 'method', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['app', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    eventsAccepted: new Counter({
      name: 'ingest_events_accepted_total',
      help: 'Events accepted (acknowledged by the bus) by route',
      labelNames: ['route'],
      registers,
    }),
    eventsDropped: new Counter({ name: 'ingest_events_dropped_total', help: 'Events dropped at ingestion, by reason', labelNames: ['reason'], registers }),
    projectKeyLookupsFailedOpen: new Counter({
      name: 'ingest_project_key_failed_open_total',
      help: 'Requests accepted without key validation because the key store was unreachable',
      registers,
    }),
    requestsThrottled: new Counter({
      name: 'api_requests_throttled_total',
      help: 'Management requests answered 429, by throttle class',
      labelNames: ['throttle'],
      registers,
    }),
    rateLimitFailedOpen: new Counter({
      name: 'api_rate_limit_failed_open_total',
      help: 'Management requests let through without a rate-limit check because the limiter store was unreachable',
      registers,
    }),
    eventsWritten: new Counter({ name: 'worker_events_written_total', help: 'Events written to ClickHouse by source topic', labelNames: ['topic'], registers }),
    busSendDuration: new Histogram({
      name: 'bus_send_duration_seconds',
      help: 'Time until the bus acknowledged a send',
      labelNames: ['topic'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    consumerBatches: new Counter({ name: 'worker_consumer_batches_total', help: 'Consumed batches by result', labelNames: ['topic', 'result'], registers }),
    ingestionWarnings: new Counter({
      name: 'worker_ingestion_warnings_total',
      help: 'Events ingested with a warning (e.g. a refused merge), by type',
      labelNames: ['type'],
      registers,
    }),
    deadLetters: new Counter({
      name: 'worker_dead_letters_total',
      help: 'Messages sent to the dead-letter topic, by failing step',
      labelNames: ['step'],
      registers,
    }),
    insightTimeToSeeData: new Histogram({
      name: 'insight_time_to_see_data_seconds',
      help: 'Time until an insight or dashboard showed data, as the web app reports it (POST /insights/timing)',
      labelNames: ['type', 'context', 'status'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    insightQueryDuration: new Histogram({
      name: 'insight_query_duration_seconds',
      help: 'Time to compute an insight answer (trend, funnel, correlation) in ClickHouse; answers served from the cache are not counted',
      labelNames: ['kind', 'result'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    clickhouseQueryDuration: new Histogram({
      name: 'clickhouse_query_duration_seconds',
      help: 'Time of one ClickHouse analytics read until its rows are parsed, by query kind and result (ok, limit, error)',
      labelNames: ['kind', 'result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    pipelineStepDuration: new Histogram({
      name: 'worker_pipeline_step_duration_seconds',
      help: 'Time a worker pipeline step took for one batch (the persons and write steps: for the runs gathered into it)',
      labelNames: ['step'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    jobRuns: new Counter({ name: 'job_runs_total', help: 'Scheduled job runs by result', labelNames: ['job', 'result'], registers }),
    consumerLag: new Gauge({
      name: 'worker_consumer_lag_messages',
      help: 'Messages the consumer group has not committed past, per partition this worker consumes (each partition reported by its owner)',
      labelNames: ['group', 'topic', 'partition'],
      registers,
    }),
    consumerGroupLag: new Gauge({
      name: 'worker_consumer_group_lag_messages',
      help: "The consumer group's lag over every partition of its topic (every worker reports the group's figure: take max, not sum)",
      labelNames: ['group', 'topic'],
      registers,
    }),
    consumerLagGrowingSeconds: new Gauge({
      name: 'worker_consumer_lag_growing_seconds',
      help: "How long the lag of this worker's partitions has kept growing (0: not growing); past WORKER_LAG_READINESS_TIMEOUT_MS the worker is not ready",
      labelNames: ['group'],
      registers,
    }),
  };
}
