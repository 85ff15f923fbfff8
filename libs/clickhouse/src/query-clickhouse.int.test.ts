import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestClickHouseDatabase, type TestClickHouseDatabase } from '@sightline/testkit';
import { createAnalyticsStore, type ClickHouseClient } from './analytics-store';
import { boundAnalyticsReads } from './analytics-reads';
import { queryClickhouse } from './query-clickhouse';
import { DEFAULT_ANALYTICS_QUERY_LIMITS, QueryLimitError } from './query-limits';

const rows = (ch: ClickHouseClient, sql: string, teamId: number | null = 1) => queryClickhouse(ch, { kind: 'test.read', teamId, sql });

// The tag and the limits as ClickHouse applies them, over HTTP and in the embedded engine.
describe.each(['http', 'chdb'] as const)('queryClickhouse (%s)', (kind) => {
  let database: TestClickHouseDatabase | undefined;
  let dataDir: string | undefined;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    if (kind === 'http') {
      database = await createTestClickHouseDatabase('query_limits');
      ch = createAnalyticsStore({ url: database.url, user: 'default', password: '', database: database.database });
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'sightline-chdb-limits-'));
      ch = createAnalyticsStore({ user: 'default', password: '', database: 'default', dataDir });
    }
  });
  afterAll(async () => {
    await ch.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops a query past its time and answers a QueryLimitError', async () => {
    const bounded = boundAnalyticsReads(ch, { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxExecutionSeconds: 1 });
    const started = Date.now();
    const error = await rows(bounded, 'SELECT count() FROM numbers_mt(1e12) WHERE sipHash64(number) % 7 = 1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryLimitError);
    expect(error).toMatchObject({ kind: 'time' });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('stops a result past its rows', async () => {
    const bounded = boundAnalyticsReads(ch, { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxResultRows: 10 });
    await expect(rows(bounded, 'SELECT number FROM numbers(100)')).rejects.toMatchObject({ kind: 'result' });
    await expect(rows(bounded, 'SELECT number FROM numbers(5)')).resolves.toHaveLength(5);
  });

  it("leaves the store's other queries unbounded after a bounded read (the embedded engine keeps SET values)", async () => {
    const bounded = boundAnalyticsReads(ch, { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxResultRows: 10 });
    await expect(rows(bounded, 'SELECT number FROM numbers(100)')).rejects.toBeInstanceOf(QueryLimitError);
    await expect(rows(ch, 'SELECT number FROM numbers(100)')).resolves.toHaveLength(100);
  });

  it("runs a read at its priority and niceness, and the store's next query at its own", async () => {
    const bounded = boundAnalyticsReads(ch, { ...DEFAULT_ANALYTICS_QUERY_LIMITS, priority: 2, threadNice: 19 });
    const settings = "SELECT getSetting('priority') AS priority, getSetting('os_thread_priority') AS nice";
    expect(await rows(bounded, settings)).toEqual([{ priority: 2, nice: 19 }]);
    // The embedded store runs all but requests' reads at priority 1 (reads pause for them); a server's default is 0.
    expect(await rows(ch, settings)).toEqual([{ priority: kind === 'chdb' ? 1 : 0, nice: 0 }]);
  });

  it("tags the query with its kind and project, and the store's next query carries no tag (the embedded engine keeps SET values)", async () => {
    const comment = "SELECT getSetting('log_comment') AS comment";
    expect(await rows(ch, comment, 42)).toEqual([{ comment: '{"kind":"test.read","team_id":42}' }]);
    expect(await (await ch.query({ query: comment, format: 'JSONEachRow' })).json()).toEqual([{ comment: '' }]);
    const bounded = boundAnalyticsReads(ch, DEFAULT_ANALYTICS_QUERY_LIMITS);
    expect(await rows(bounded, comment, null)).toEqual([{ comment: '{"kind":"test.read","team_id":null}' }]);
  });
  it("keeps a read's own settings to that read: the store's next query runs with its own", async () => {
    const setting = "SELECT getSetting('join_use_nulls') AS value";
    expect(await queryClickhouse(ch, { kind: 'test.read', teamId: 1, sql: setting, settings: { join_use_nulls: 1 } })).toEqual([{ value: true }]);
    expect(await rows(ch, setting)).toEqual([{ value: false }]);
  });

  // Last in the file: in the embedded engine (chdb 3.4), a UNION that fails after some output can
  // leave rows that the session's next query then answers with (seen in ~1 of 6 tries).
  // chdb 3.4 handed a failed statement's partial output out in front of the next statement's
  // answer (engine-session-queue.ts); in embedded mode that next read may be another project's.
  // The first two stopped reads left their rows behind every time, the UNIONs now and then.
  it.each([
    ['a result limit hit mid-stream', 50_000, 'SELECT number FROM numbers(100000) SETTINGS max_block_size = 1000'],
    ['an error thrown mid-stream', null, 'SELECT number FROM numbers(100000) WHERE throwIf(number = 90000) = 0 SETTINGS max_block_size = 1000'],
    ['a result limit hit in a UNION', 10, 'SELECT number FROM numbers(8) UNION ALL SELECT number FROM numbers(8)'],
    ['an error in a UNION branch', null, 'SELECT number FROM numbers(8) UNION ALL SELECT throwIf(number = 5) FROM numbers(8)'],
  ])("leaves nothing of a read stopped by %s in the store's next answers, queued at once or later", async (_case, maxResultRows, sql) => {
    const reader = maxResultRows === null ? ch : boundAnalyticsReads(ch, { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxResultRows });
    for (let attempt = 0; attempt < 5; attempt++) {
      const stopped = rows(reader, sql);
      const next = rows(ch, "SELECT 'next' AS answer", 2);
      await expect(stopped).rejects.toBeTruthy();
      await expect(next).resolves.toEqual([{ answer: 'next' }]);
      await expect(rows(ch, "SELECT 'later' AS answer", 2)).resolves.toEqual([{ answer: 'later' }]);
    }
  });

  it('bounds a UNION as a whole, and a read whose text takes no settings clause as well', async () => {
    const bounded = boundAnalyticsReads(ch, { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxResultRows: 10 });
    const [settings] = (await rows(bounded, "SELECT getSetting('max_result_rows') AS max, getSetting('log_comment') AS tag")) as {
      max: unknown;
      tag: string;
    }[];
    expect({ ...settings, max: String(settings!.max) }).toEqual({ max: '10', tag: '{"kind":"test.read","team_id":1}' });
    const union = 'SELECT number FROM numbers(8) UNION ALL SELECT number FROM numbers(8)';
    await expect(rows(ch, union)).resolves.toHaveLength(16);
    await expect(rows(bounded, union)).rejects.toMatchObject({ kind: 'result' });
    // A comment keeps the settings as SET statements (settings-clause.ts): bounded all the same.
    await expect(rows(bounded, `${union} -- a comment`)).rejects.toMatchObject({ kind: 'result' });
  });
});
