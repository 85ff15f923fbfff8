// The cluster layout's migrations, checked by ClickHouse itself (chdb through the test front):
// no cluster runs here, so every statement is parsed and formatted by ClickHouse's own parser,
// and what migrateClickHouse sends in cluster mode is recorded instead of run.
import {
  createTestClickHouseDatabase,
  formatWithClickHouse,
  recordStatements,
  startRecordingProxy,
  testEventRow,
  type TestClickHouseDatabase,
} from '@sightline/testkit';
import { createAnalyticsStore, type ClickHouseClient } from '../analytics-store';
import { loadMigrations, migrateClickHouse, migrationStatements, schemaMigrationsStatements } from '../migrations';
import { EVENT_VALUES_COLUMNS, insertEvents, insertEventValues } from '../tables/events.table';
import { clickhouseLayout, clusterClientSettings } from './layout';

const cluster = clickhouseLayout('sightline');

describe('cluster migrations, parsed by ClickHouse', () => {
  let chDb: TestClickHouseDatabase;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    chDb = await createTestClickHouseDatabase('cluster-migrations');
    ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
  });
  afterAll(async () => {
    await ch.close();
    await chDb.drop();
  });

  const statements = [...schemaMigrationsStatements(cluster), ...loadMigrations().flatMap((m) => migrationStatements(m, cluster))];

  it.each(statements.map((s) => [s.split('\n')[0]!, s]))('%s … parses, ON CLUSTER and engine kept', async (_first, statement) => {
    const formatted = await formatWithClickHouse(statement);
    expect(formatted).toMatch(/ ON CLUSTER sightline\b/);
    const engine = /ENGINE = (\w+)/.exec(statement)?.[1];
    if (engine) expect(formatted).toContain(`ENGINE = ${engine}(`);
  });

  it('rejects what ClickHouse does not parse (the check above is a real one)', async () => {
    await expect(
      formatWithClickHouse("CREATE TABLE t ON CLUSTER sightline (a Int8) ENGINE = ReplicatedMergeTree('/p', '{replica}' ORDER BY a"),
    ).rejects.toThrow(/does not parse/);
  });

  it('is what migrateClickHouse sends in cluster mode, and nothing of the single-server form', async () => {
    // Answered here: SELECT version FROM schema_migrations finds nothing applied; every DDL is recorded, not run.
    const recorded = recordStatements(ch, (sql) => (/^\s*SELECT/i.test(sql) ? [] : /^\s*(CREATE|ALTER)/i.test(sql) ? [] : undefined));
    const insert = jest.spyOn(ch, 'insert').mockResolvedValue({ executed: true, query_id: 'x', summary: undefined, response_headers: {} });
    try {
      await migrateClickHouse(recorded.client, { layout: cluster });
    } finally {
      insert.mockRestore();
    }
    const ddl = recorded.statements.filter((s) => /^\s*(CREATE|ALTER)/i.test(s));
    expect(ddl).toEqual(statements);
  });

  it('sends only settings this ClickHouse knows', async () => {
    const names = Object.keys(clusterClientSettings(cluster));
    const rows = await (
      await ch.query({ query: 'SELECT name FROM system.settings WHERE name IN {names:Array(String)}', query_params: { names }, format: 'JSONEachRow' })
    ).json<{ name: string }>();
    expect(rows.map((r) => r.name).sort()).toEqual([...names].sort());
  });
});

describe('a cluster client', () => {
  it('inserts events through the events table with the deduplication token, answered once every shard wrote', async () => {
    const chDb = await createTestClickHouseDatabase('cluster-client');
    const single = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(single);
    const proxy = await startRecordingProxy(chDb.url);
    const ch = createAnalyticsStore({ url: proxy.base, user: 'default', password: '', database: chDb.database, layout: cluster });
    try {
      await insertEvents(ch, [testEventRow({ event: 'e', atMs: Date.now() })], { deduplicationToken: 'batch-token-1' });
      const insert = proxy.requests.map((r) => new URL(r.path, 'http://x').searchParams).find((p) => p.get('query')?.startsWith('INSERT'));
      expect(insert?.get('query')).toBe('INSERT INTO events FORMAT JSONEachRow');
      expect(insert?.get('insert_deduplication_token')).toBe('batch-token-1');
      expect(insert?.get('distributed_foreground_insert')).toBe('1');
      // On one server the setting changes nothing: the row is there.
      const rows = await (await single.query({ query: 'SELECT count() AS n FROM events', format: 'JSONEachRow' })).json<{ n: string }>();
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await ch.close();
      await single.close();
      await proxy.close();
      await chDb.drop();
    }
  });

  it("sends the worker's RowBinary insert through the events table the same way", async () => {
    const chDb = await createTestClickHouseDatabase('cluster-client-binary');
    const single = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(single);
    const proxy = await startRecordingProxy(chDb.url);
    const ch = createAnalyticsStore({ url: proxy.base, user: 'default', password: '', database: chDb.database, layout: cluster });
    try {
      const values = {
        uuid: '0190a6f0-0000-7000-8000-000000000001',
        event: 'e',
        properties: '{}',
        timestamp: Date.now(),
        team_id: 1,
        distinct_id: 'u',
        elements_chain: '',
        created_at: Date.now(),
        person_id: '0190a6f0-0000-5000-8000-000000000002',
        person_created_at: null,
        person_properties: '{}',
        person_mode: 'full' as const,
        groups: [],
      };
      await insertEventValues(ch, [values], (row) => row, { deduplicationToken: 'batch-token-2' });
      const insert = proxy.requests.map((r) => new URL(r.path, 'http://x').searchParams).find((p) => p.get('query')?.startsWith('INSERT'));
      expect(insert?.get('query')).toBe(`INSERT INTO events (${EVENT_VALUES_COLUMNS.join(', ')}) FORMAT RowBinary`);
      expect(insert?.get('insert_deduplication_token')).toBe('batch-token-2');
      expect(insert?.get('distributed_foreground_insert')).toBe('1');
      const rows = await (await single.query({ query: 'SELECT count() AS n FROM events', format: 'JSONEachRow' })).json<{ n: string }>();
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await ch.close();
      await single.close();
      await proxy.close();
      await chDb.drop();
    }
  });

  it('needs a ClickHouse server: the in-process engine is one server', () => {
    expect(() => createAnalyticsStore({ user: 'default', password: '', database: 'default', dataDir: '/tmp/unused', layout: cluster })).toThrow(
      /CLICKHOUSE_CLUSTER=sightline needs CLICKHOUSE_URL/,
    );
  });
});
