import { analyticsOptionsFromConfig } from './analytics-config';

const base = { INSIGHT_CACHE_MAX_MB: 64, ANALYTICS_QUERY_TIMEOUT_SECONDS: 60, ANALYTICS_QUERY_MAX_MEMORY_MB: 2048, ANALYTICS_QUERY_CONCURRENCY: 0 };

describe('analyticsOptionsFromConfig', () => {
  it('embedded: one read at a time, paused for the store’s own work, on lowered threads', () => {
    const { queryLimits } = analyticsOptionsFromConfig(base);
    expect(queryLimits).toMatchObject({ maxConcurrentReads: 1, priority: 2, threadNice: 19, maxReadWaitSeconds: 30 });
    expect(queryLimits.maxThreads).toBeGreaterThanOrEqual(1);
  });

  it('with CLICKHOUSE_URL: the server schedules its own reads, unbounded unless ANALYTICS_QUERY_CONCURRENCY says', () => {
    const server = { ...base, CLICKHOUSE_URL: 'http://clickhouse:8123' };
    expect(analyticsOptionsFromConfig(server).queryLimits).toMatchObject({ maxConcurrentReads: 0, priority: 0, threadNice: 0, maxThreads: 0 });
    expect(analyticsOptionsFromConfig({ ...server, ANALYTICS_QUERY_CONCURRENCY: 3 }).queryLimits.maxConcurrentReads).toBe(3);
    expect(analyticsOptionsFromConfig({ ...base, ANALYTICS_QUERY_CONCURRENCY: 2 }).queryLimits.maxConcurrentReads).toBe(2);
  });
});
