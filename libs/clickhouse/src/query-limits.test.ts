import type { ClickHouseClient } from '@clickhouse/client';
import { analyticsQuerySettings, asQueryLimitError, boundAnalyticsReads, DEFAULT_ANALYTICS_QUERY_LIMITS, QueryLimitError } from './query-limits';
import { ReadGateBusyError } from './read-gate';

describe('analytics query limits', () => {
  it('turns the errors of the limits into QueryLimitError, and leaves any other error alone', () => {
    // By code: the client reads `type` out of the message, so it is not always the error's name.
    for (const [code, kind] of [
      ['159', 'time'], // TIMEOUT_EXCEEDED
      ['241', 'memory'], // MEMORY_LIMIT_EXCEEDED
      ['396', 'result'], // TOO_MANY_ROWS_OR_BYTES
      ['158', 'result'], // TOO_MANY_ROWS
    ] as const) {
      const mapped = asQueryLimitError(Object.assign(new Error('x'), { code, type: 'UUID' }), DEFAULT_ANALYTICS_QUERY_LIMITS);
      expect(mapped).toBeInstanceOf(QueryLimitError);
      expect(mapped).toMatchObject({ kind });
    }
    const other = Object.assign(new Error('x'), { code: '62', type: 'TIMEOUT_EXCEEDED' });
    expect(asQueryLimitError(other, DEFAULT_ANALYTICS_QUERY_LIMITS)).toBe(other);
  });

  it('names the limit in the message', () => {
    const limits = { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxExecutionSeconds: 7 };
    expect((asQueryLimitError({ code: '159' }, limits) as Error).message).toMatch(/longer than 7 s/);
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

  it('sends the priority and thread niceness of the reads where they are set', () => {
    expect(analyticsQuerySettings({ ...DEFAULT_ANALYTICS_QUERY_LIMITS, priority: 2, threadNice: 19 })).toMatchObject({
      priority: '2',
      os_thread_priority: '19',
    });
    expect(analyticsQuerySettings(DEFAULT_ANALYTICS_QUERY_LIMITS)).not.toHaveProperty('priority');
    expect(analyticsQuerySettings(DEFAULT_ANALYTICS_QUERY_LIMITS)).not.toHaveProperty('os_thread_priority');
  });

  it('runs at most maxConcurrentReads reads at once, the others in turn, and refuses one that waits too long', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const running = new Set<string>();
      const finish = new Map<string, () => void>();
      const client = {
        query: (params: { query: string }) =>
          new Promise((resolve) => {
            running.add(params.query);
            finish.set(params.query, () => (running.delete(params.query), resolve(params.query)));
          }),
      };
      const limits = { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxConcurrentReads: 1, maxReadWaitSeconds: 30 };
      const bounded = boundAnalyticsReads(client as unknown as ClickHouseClient, limits);
      const first = bounded.query({ query: 'first' });
      const second = bounded.query({ query: 'second' });
      await new Promise((resolve) => setImmediate(resolve));
      expect([...running]).toEqual(['first']);
      finish.get('first')!();
      await expect(first).resolves.toBe('first');
      await new Promise((resolve) => setImmediate(resolve));
      expect([...running]).toEqual(['second']);
      const third = bounded.query({ query: 'third' });
      jest.advanceTimersByTime(30_000);
      await expect(third).rejects.toBeInstanceOf(ReadGateBusyError);
      finish.get('second')!();
      await expect(second).resolves.toBe('second');
    } finally {
      jest.useRealTimers();
    }
  });
});
