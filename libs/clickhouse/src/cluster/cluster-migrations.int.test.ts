// The cluster layout's migrations, checked by ClickHouse itself (chdb through the test front):
// no cluster runs here, so every statement is parsed and formatted by ClickHouse's own parser,
// and what migrateClickHouse sends in cluster mode is recorded instead of run.
import { createTestClickHouseDatabase, formatWithClickHouse, recordStatements, type TestClickHouseDatabase } from '@sightline/testkit';
import { createAnalyticsStore, type ClickHouseClient } from '../analytics-store';
import { loadMigrations, migrateClickHouse, migrationStatements, schemaMigrationsStatements } from '../migrations';
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
