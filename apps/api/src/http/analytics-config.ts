import { availableParallelism } from 'node:os';
import { DEFAULT_ANALYTICS_QUERY_LIMITS, type AnalyticsQueryLimits } from '@sightline/clickhouse';

/** How requests may use ClickHouse and the insight answer cache (docs/http-api.md#limits). */
export interface AnalyticsOptions {
  queryLimits: AnalyticsQueryLimits;
  /** The most bytes (of the answers' JSON) the insight answer cache holds. */
  cacheMaxBytes: number;
}

const MIB = 1024 * 1024;

/** AnalyticsOptions from the INSIGHT_CACHE_MAX_MB and ANALYTICS_QUERY_* settings (insightsEnv). */
export function analyticsOptionsFromConfig(config: {
  CLICKHOUSE_URL?: string;
  INSIGHT_CACHE_MAX_MB: number;
  ANALYTICS_QUERY_TIMEOUT_SECONDS: number;
  ANALYTICS_QUERY_MAX_MEMORY_MB: number;
}): AnalyticsOptions {
  return {
    queryLimits: {
      ...DEFAULT_ANALYTICS_QUERY_LIMITS,
      maxExecutionSeconds: config.ANALYTICS_QUERY_TIMEOUT_SECONDS,
      maxMemoryBytes: config.ANALYTICS_QUERY_MAX_MEMORY_MB * MIB,
      // The embedded engine shares the machine with capture, decide and the worker in one
      // process: a request's query gets half the cores, so they keep the rest. A server sizes its own.
      maxThreads: config.CLICKHOUSE_URL ? 0 : Math.max(1, Math.floor(availableParallelism() / 2)),
    },
    cacheMaxBytes: config.INSIGHT_CACHE_MAX_MB * MIB,
  };
}
