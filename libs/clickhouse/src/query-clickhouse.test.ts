import type { ClickHouseClient } from '@clickhouse/client';
import { boundAnalyticsReads, withQueryTimeLimit, type QueryDurationObserver } from './analytics-reads';
import { queryClickhouse, queryTag } from './query-clickhouse';
import { analyticsQuerySettings, DEFAULT_ANALYTICS_QUERY_LIMITS, QueryLimitError } from './query-limits';
import { ReadGateBusyError } from './read-gate';

/** A client whose `query` records its parameters and answers one row per name in `answer` (or throws it). */
function recordingClient(answer: (params: { query: string }) => Promise<unknown[]> = async (p) => [p.query]) {
  const seen: Record<string, unknown>[] = [];
  const client = {
    query: async (params: { query: string }) => {
      seen.push(params);
      const rows = await answer(params);
      return {
        json: async () => rows,
        text: async () => rows.map((row) => `${JSON.stringify(row)}\n`).join(''),
        stream: async function* () {
          yield rows.map((row) => ({ json: () => row }));
        },
      };
    },
    close: async function (this: unknown) {
      return this === client ? 'closed by the client itself' : 'wrong this';
    },
  };
  return { client: client as unknown as ClickHouseClient, seen };
}

describe('queryClickhouse', () => {
  it('tags every query with its kind and project in log_comment, and answers the rows', async () => {
    const { client, seen } = recordingClient();
    await expect(queryClickhouse(client, { kind: 'persons.values', teamId: 7, sql: 'SELECT 1', params: { a: 1 } })).resolves.toEqual(['SELECT 1']);
    expect(seen[0]).toMatchObject({
      query: 'SELECT 1',
      query_params: { a: 1 },
      format: 'JSONEachRow',
      clickhouse_settings: { log_comment: '{"kind":"persons.values","team_id":7}' },
    });
    await queryClickhouse(client, { kind: 'deletion.mutations', teamId: null, sql: 'SELECT 2' });
    expect(seen[1]).toMatchObject({ clickhouse_settings: { log_comment: '{"kind":"deletion.mutations","team_id":null}' } });
  });

  it("applies a project's shorter time limit, never a longer one, and shares the bounded client's read gate", async () => {
    const { client, seen } = recordingClient();
    const limits = { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxExecutionSeconds: 60, maxConcurrentReads: 1 };
    const bounded = boundAnalyticsReads(client, limits);
    const project = withQueryTimeLimit(bounded, 5);
    expect(withQueryTimeLimit(bounded, 5)).toBe(project);
    await queryClickhouse(project, { kind: 'trends', teamId: 1, sql: 'SELECT 1' });
    expect(seen[0]!.clickhouse_settings).toMatchObject({ max_execution_time: 5, timeout_overflow_mode: 'throw' });
    // A limit at or above the server's, none, or an unbounded client: the client itself.
    for (const seconds of [60, 600, null, undefined, 0]) expect(withQueryTimeLimit(bounded, seconds)).toBe(bounded);
    expect(withQueryTimeLimit(client, 5)).toBe(client);
    // One gate for both identities: a read of the project's waits for the bounded client's.
    let finish!: () => void;
    const slow = recordingClient(() => new Promise((resolve) => (finish = () => resolve(['slow']))));
    const gated = boundAnalyticsReads(slow.client, limits);
    const first = queryClickhouse(gated, { kind: 'trends', teamId: 1, sql: 'SELECT 1' });
    const second = queryClickhouse(withQueryTimeLimit(gated, 5), { kind: 'trends', teamId: 1, sql: 'SELECT 2' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(slow.seen).toHaveLength(1);
    finish();
    await first;
    while (slow.seen.length < 2) await new Promise((resolve) => setImmediate(resolve));
    finish();
    await second;
  });

  it('refuses a kind that is not a lower-case dotted name, before querying', async () => {
    const { client, seen } = recordingClient();
    for (const kind of ['', 'Trends', "x'; DROP", 'a\\b', 'trends.']) {
      await expect(queryClickhouse(client, { kind, teamId: 1, sql: 'SELECT 1' })).rejects.toThrow(/lower-case dotted name/);
    }
    expect(() => queryTag({ kind: 'trends', teamId: 1.5 })).toThrow(/not an integer/);
    expect(seen).toHaveLength(0);
  });

  it('sends the limits of a bounded client with every read, over settings the caller passed, and passes other calls through', async () => {
    const { client, seen } = recordingClient();
    const bounded = boundAnalyticsReads(client, DEFAULT_ANALYTICS_QUERY_LIMITS);
    await queryClickhouse(bounded, { kind: 'trends', teamId: 1, sql: 'SELECT 1', settings: { max_execution_time: 100000, readonly: '1' } });
    expect(seen[0]).toMatchObject({ query: 'SELECT 1', clickhouse_settings: { ...analyticsQuerySettings(DEFAULT_ANALYTICS_QUERY_LIMITS), readonly: '1' } });
    expect(await (bounded as unknown as { close(): Promise<string> }).close()).toBe('closed by the client itself');
    // The raw client stays unbounded: only the bound identity carries the limits.
    await queryClickhouse(client, { kind: 'trends', teamId: 1, sql: 'SELECT 1' });
    expect(seen[1]!.clickhouse_settings).toEqual({ log_comment: '{"kind":"trends","team_id":1}' });
  });

  it('times every query of a bounded client by kind and outcome, a limit error as a QueryLimitError', async () => {
    const observed: [string, string][] = [];
    const duration: QueryDurationObserver = {
      observe: (labels, seconds) => (expect(seconds).toBeGreaterThanOrEqual(0), observed.push([labels.kind, labels.result])),
    };
    const { client } = recordingClient(async (p) => {
      if (p.query === 'slow') throw Object.assign(new Error('Timeout exceeded'), { code: '159' });
      if (p.query === 'broken') throw Object.assign(new Error('Syntax error'), { code: '62' });
      return [1];
    });
    const bounded = boundAnalyticsReads(client, DEFAULT_ANALYTICS_QUERY_LIMITS, { duration });
    await queryClickhouse(bounded, { kind: 'trends', teamId: 1, sql: 'fine' });
    await expect(queryClickhouse(bounded, { kind: 'funnels', teamId: 1, sql: 'slow' })).rejects.toBeInstanceOf(QueryLimitError);
    await expect(queryClickhouse(bounded, { kind: 'funnels', teamId: 1, sql: 'broken' })).rejects.toThrow('Syntax error');
    expect(observed).toEqual([
      ['trends', 'ok'],
      ['funnels', 'limit'],
      ['funnels', 'error'],
    ]);
  });

  it('parses a large result in slices, taking a turn between them', async () => {
    let turns = 0;
    const { client } = recordingClient(async () => Array.from({ length: 12_000 }, (_, i) => i));
    const bounded = boundAnalyticsReads(client, DEFAULT_ANALYTICS_QUERY_LIMITS, { nextTurn: async () => void turns++ });
    const rows = await queryClickhouse<number>(bounded, { kind: 'trends', teamId: 1, sql: 'SELECT number FROM numbers(12000)' });
    expect(rows).toHaveLength(12_000);
    expect(rows[11_999]).toBe(11_999);
    expect(turns).toBe(2);
  });

  it('runs at most maxConcurrentReads reads at once, the others in turn, and refuses one that waits too long', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const running = new Set<string>();
      const finish = new Map<string, () => void>();
      const { client } = recordingClient(
        (params) =>
          new Promise((resolve) => {
            running.add(params.query);
            finish.set(params.query, () => (running.delete(params.query), resolve([params.query])));
          }),
      );
      const limits = { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxConcurrentReads: 1, maxReadWaitSeconds: 30 };
      const bounded = boundAnalyticsReads(client, limits);
      const read = (sql: string) => queryClickhouse(bounded, { kind: 'trends', teamId: 1, sql });
      const first = read('first');
      const second = read('second');
      await new Promise((resolve) => setImmediate(resolve));
      expect([...running]).toEqual(['first']);
      finish.get('first')!();
      await expect(first).resolves.toEqual(['first']);
      await new Promise((resolve) => setImmediate(resolve));
      expect([...running]).toEqual(['second']);
      const third = read('third');
      jest.advanceTimersByTime(30_000);
      await expect(third).rejects.toBeInstanceOf(ReadGateBusyError);
      finish.get('second')!();
      await expect(second).resolves.toEqual(['second']);
    } finally {
      jest.useRealTimers();
    }
  });
});
