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
  INSIGHT_CACHE_MAX_MB: number;
  ANALYTICS_QUERY_TIMEOUT_SECONDS: number;
  ANALYTICS_QUERY_MAX_MEMORY_MB: number;
}): AnalyticsOptions {
  return {
    queryLimits: {
      ...DEFAULT_ANALYTICS_QUERY_LIMITS,
      maxExecutionSeconds: config.ANALYTICS_QUERY_TIMEOUT_SECONDS,
      maxMemoryBytes: config.ANALYTICS_QUERY_MAX_MEMORY_MB * MIB,
    },
    cacheMaxBytes: config.INSIGHT_CACHE_MAX_MB * MIB,
  };
}
