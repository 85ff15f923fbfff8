import type { ClickHouseClient } from '@clickhouse/client';
import { analyticsQuerySettings, asQueryLimitError, boundAnalyticsReads, DEFAULT_ANALYTICS_QUERY_LIMITS, QueryLimitError } from './query-limits';

describe('analytics query limits', () => {
  it('turns the errors of the limits into QueryLimitError, and leaves any other error alone', () => {
    for (const [type, kind] of [
      ['TIMEOUT_EXCEEDED', 'time'],
      ['MEMORY_LIMIT_EXCEEDED', 'memory'],
      ['TOO_MANY_ROWS_OR_BYTES', 'result'],
    ] as const) {
      const mapped = asQueryLimitError(Object.assign(new Error('x'), { type }), DEFAULT_ANALYTICS_QUERY_LIMITS);
      expect(mapped).toBeInstanceOf(QueryLimitError);
      expect(mapped).toMatchObject({ kind });
    }
    const other = Object.assign(new Error('x'), { type: 'SYNTAX_ERROR' });
    expect(asQueryLimitError(other, DEFAULT_ANALYTICS_QUERY_LIMITS)).toBe(other);
  });

  it('names the limit in the message', () => {
    const limits = { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxExecutionSeconds: 7 };
    expect((asQueryLimitError({ type: 'TIMEOUT_EXCEEDED' }, limits) as Error).message).toMatch(/longer than 7 s/);
  });

  it('sends the limits with every read, over settings the caller passed, and passes other calls through', async () => {
    const seen: unknown[] = [];
    const client = {
      query: async (params: unknown) => (seen.push(params), 'result'),
      close: async function (this: unknown) {
        return this === client ? 'closed by the client itself' : 'wrong this';
      },
    };
    const bounded = boundAnalyticsReads(client as unknown as ClickHouseClient, DEFAULT_ANALYTICS_QUERY_LIMITS);
    await bounded.query({ query: 'SELECT 1', clickhouse_settings: { max_execution_time: 100000, readonly: '1' } });
    expect(seen[0]).toMatchObject({ query: 'SELECT 1', clickhouse_settings: { ...analyticsQuerySettings(DEFAULT_ANALYTICS_QUERY_LIMITS), readonly: '1' } });
    expect(await (bounded as unknown as { close(): Promise<string> }).close()).toBe('closed by the client itself');
  });
});
