import type { ClickHouseSettings } from '@clickhouse/client';

/**
 * What one analytics read may cost ClickHouse (docs/http-api.md#limits). Past any of them the
 * query stops in ClickHouse and the read fails with a QueryLimitError, instead of running on
 * (or growing the embedded engine, which shares the serving process's memory).
 */
export interface AnalyticsQueryLimits {
  /** max_execution_time; PostHog's HogQL default is 60 s (posthog/hogql/constants.py HogQLGlobalSettings). */
  maxExecutionSeconds: number;
  /** max_memory_usage of one query. */
  maxMemoryBytes: number;
  /** max_result_rows: no answer needs more rows than this (a trend holds at most MAX_TREND_POINTS). */
  maxResultRows: number;
  /** max_result_bytes: the uncompressed result the process would then parse. */
  maxResultBytes: number;
  /** max_threads of one query; 0: ClickHouse's own default (the server's cores). */
  maxThreads: number;
  /** Reads of this process in the engine at once (read-gate.ts); 0: no bound. */
  maxConcurrentReads: number;
  /**
   * ClickHouse `priority` of the reads (larger: lower; 0: none). A read pauses while a query of a
   * higher priority runs: in embedded mode, the worker's inserts (EMBEDDED_WRITE_PRIORITY).
   */
  priority: number;
  /**
   * ClickHouse `os_thread_priority` (the nice value, 0..19) of the threads running a read; the
   * engine applies it only where the process may set it (CAP_SYS_NICE), and ignores it elsewhere.
   */
  threadNice: number;
  /** How long a read waits for its turn before the request is refused (429). */
  maxReadWaitSeconds: number;
}

export const DEFAULT_ANALYTICS_QUERY_LIMITS: AnalyticsQueryLimits = {
  maxExecutionSeconds: 60,
  maxMemoryBytes: 2 * 1024 ** 3,
  maxResultRows: 500_000,
  maxResultBytes: 256 * 1024 ** 2,
  maxThreads: 0,
  maxConcurrentReads: 0,
  priority: 0,
  threadNice: 0,
  // PostHog's wait for a query slot (posthog/clickhouse/client/limit.py, retry_timeout).
  maxReadWaitSeconds: 30,
};

/** The settings that carry the limits, for a query's clickhouse_settings. */
export function analyticsQuerySettings(limits: AnalyticsQueryLimits): ClickHouseSettings {
  return {
    max_execution_time: limits.maxExecutionSeconds,
    timeout_overflow_mode: 'throw',
    max_memory_usage: String(limits.maxMemoryBytes),
    max_result_rows: String(limits.maxResultRows),
    max_result_bytes: String(limits.maxResultBytes),
    result_overflow_mode: 'throw',
    // Over HTTP the status then tells a stopped query: no 200 whose body ends in an exception.
    wait_end_of_query: 1,
    ...(limits.maxThreads > 0 ? { max_threads: limits.maxThreads } : {}),
    ...(limits.priority > 0 ? { priority: String(limits.priority) } : {}),
    ...(limits.threadNice > 0 ? { os_thread_priority: String(limits.threadNice) } : {}),
  };
}

/**
 * The same settings at ClickHouse's defaults (no limit). The embedded engine applies a query's
 * settings with SET on its one session, where they outlast the query: every query of the
 * embedded store sends these first, so a bounded read does not bound the worker's next insert.
 */
export const UNBOUNDED_QUERY_SETTINGS: ClickHouseSettings = {
  max_threads: 0,
  max_execution_time: 0,
  max_memory_usage: '0',
  max_result_rows: '0',
  max_result_bytes: '0',
  os_thread_priority: '0',
};

/**
 * The `priority` of everything the embedded store runs outside requests' reads: the worker's
 * inserts (capture waits for them), migrations, jobs. Requests' reads run at a lower one
 * (AnalyticsQueryLimits.priority) and pause while any of these runs.
 */
export const EMBEDDED_STORE_PRIORITY = 1;

/** Which limit stopped a query. */
export type QueryLimitKind = 'time' | 'memory' | 'result';

/**
 * ClickHouse's errors for the limits above, by error code (the error's `type` is read out of the
 * message text by the client and is not always the error's name).
 */
const LIMIT_ERRORS: ReadonlyMap<number, QueryLimitKind> = new Map([
  [159, 'time'], // TIMEOUT_EXCEEDED
  [241, 'memory'], // MEMORY_LIMIT_EXCEEDED
  [396, 'result'], // TOO_MANY_ROWS_OR_BYTES
  [158, 'result'], // TOO_MANY_ROWS
  [307, 'result'], // TOO_MANY_BYTES
]);

/** An analytics read stopped by one of its limits: the request asked for too much, not a fault. */
export class QueryLimitError extends Error {
  constructor(
    readonly kind: QueryLimitKind,
    message: string,
  ) {
    super(message);
    this.name = 'QueryLimitError';
  }
}

function limitMessage(kind: QueryLimitKind, limits: AnalyticsQueryLimits): string {
  const narrow = 'Narrow the date range, add filters, or ask for fewer breakdown values.';
  if (kind === 'time') return `The query ran longer than ${limits.maxExecutionSeconds} s (max_execution_time), the most one query may take. ${narrow}`;
  if (kind === 'memory')
    return `The query needed more than ${Math.round(limits.maxMemoryBytes / 1024 ** 2)} MiB (max_memory_usage), the most one query may use. ${narrow}`;
  return `The query's result is larger than ${limits.maxResultRows} rows or ${Math.round(limits.maxResultBytes / 1024 ** 2)} MiB (max_result_rows, max_result_bytes), the most one query may return. ${narrow}`;
}

/** A QueryLimitError for a ClickHouse error that is one of the limits, else the error itself. */
export function asQueryLimitError(error: unknown, limits: AnalyticsQueryLimits): unknown {
  const kind = LIMIT_ERRORS.get(Number((error as { code?: unknown } | null)?.code));
  return kind ? new QueryLimitError(kind, limitMessage(kind, limits)) : error;
}
