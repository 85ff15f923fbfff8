import { availableParallelism } from 'node:os';
import { DEFAULT_ANALYTICS_QUERY_LIMITS, EMBEDDED_STORE_PRIORITY, type AnalyticsQueryLimits } from '@sightline/clickhouse';

/** How requests may use ClickHouse and the insight answer cache (docs/http-api.md#limits). */
export interface AnalyticsOptions {
  queryLimits: AnalyticsQueryLimits;
  /** The most bytes (of the answers' JSON) the insight answer cache holds. */
  cacheMaxBytes: number;
}

const MIB = 1024 * 1024;

/**
 * The embedded engine shares the machine with capture, decide and the worker in one process:
 * a request's read gets half the cores, one read runs at a time (the others wait their turn,
 * read-gate.ts), it pauses while the worker inserts (ClickHouse `priority`), and its threads
 * yield the CPU to the rest of the process (`os_thread_priority`, where the process may set it).
 * A server sizes and schedules its own.
 */
const EMBEDDED_READS = {
  maxThreads: Math.max(1, Math.floor(availableParallelism() / 2)),
  maxConcurrentReads: 1,
  priority: EMBEDDED_STORE_PRIORITY + 1,
  threadNice: 19,
} as const;

/** AnalyticsOptions from the INSIGHT_CACHE_MAX_MB and ANALYTICS_QUERY_* settings (insightsEnv). */
export function analyticsOptionsFromConfig(config: {
  CLICKHOUSE_URL?: string;
  INSIGHT_CACHE_MAX_MB: number;
  ANALYTICS_QUERY_TIMEOUT_SECONDS: number;
  ANALYTICS_QUERY_MAX_MEMORY_MB: number;
  ANALYTICS_QUERY_CONCURRENCY: number;
}): AnalyticsOptions {
  return {
    queryLimits: {
      ...DEFAULT_ANALYTICS_QUERY_LIMITS,
      maxExecutionSeconds: config.ANALYTICS_QUERY_TIMEOUT_SECONDS,
      maxMemoryBytes: config.ANALYTICS_QUERY_MAX_MEMORY_MB * MIB,
      ...(config.CLICKHOUSE_URL ? {} : EMBEDDED_READS),
      ...(config.ANALYTICS_QUERY_CONCURRENCY > 0 ? { maxConcurrentReads: config.ANALYTICS_QUERY_CONCURRENCY } : {}),
    },
    cacheMaxBytes: config.INSIGHT_CACHE_MAX_MB * MIB,
  };
}
