import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestClickHouseDatabase, type TestClickHouseDatabase } from '@sightline/testkit';
import { createAnalyticsStore, type ClickHouseClient } from './analytics-store';
import { toClickHouseDateTime } from './datetime';
import { assertClickHouseMigrated, loadMigrations, migrateClickHouse } from './migrations';
import { insertEvents, type EventRow } from './tables/events.table';

function row(i: number, uuid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`): EventRow {
  return {
    uuid,
    event: i % 2 ? 'odd' : 'even',
    properties: JSON.stringify({ i }),
    timestamp: toClickHouseDateTime(Date.parse('2024-01-01T00:00:00Z') + i * 1000),
    team_id: 1,
    distinct_id: `u${i % 10}`,
    elements_chain: '',
    created_at: toClickHouseDateTime(Date.now()),
    person_id: '00000000-0000-5000-8000-000000000000',
    person_properties: '',
    person_mode: 'full',
  };
}

async function count(ch: ClickHouseClient, sql: string): Promise<number> {
  const rows = await (await ch.query({ query: sql, format: 'JSONEachRow' })).json<{ c: string }>();
  return Number(rows[0]!.c);
}

// The same SQL against both adapters: ClickHouse over HTTP and chdb in-process.
describe.each(['http', 'chdb'] as const)('analytics store (%s)', (kind) => {
  let database: TestClickHouseDatabase | undefined;
  let dataDir: string | undefined;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    if (kind === 'http') {
      database = await createTestClickHouseDatabase('analytics');
      ch = createAnalyticsStore({ url: database.url, user: 'default', password: '', database: database.database });
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'sightline-chdb-'));
      ch = createAnalyticsStore({ user: 'default', password: '', database: 'default', dataDir });
    }
  });
  afterAll(async () => {
    await ch.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('applies migrations idempotently, also when run concurrently', async () => {
    const results = await Promise.all([migrateClickHouse(ch), migrateClickHouse(ch)]);
    expect(new Set(results.flat())).toEqual(new Set(loadMigrations().map((m) => m.version)));
    expect(await migrateClickHouse(ch)).toEqual([]);
    await expect(assertClickHouseMigrated(ch)).resolves.toBeUndefined();
  });

  it('inserts batches and collapses a redelivered uuid under FINAL', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => row(i));
    await insertEvents(ch, rows);
    await insertEvents(ch, rows.slice(0, 100)); // redelivery of the first 100
    expect(await count(ch, 'SELECT count() AS c FROM events')).toBe(5100);
    expect(await count(ch, 'SELECT count() AS c FROM events FINAL')).toBe(5000);
    expect(await count(ch, "SELECT count() AS c FROM events FINAL WHERE event = 'odd'")).toBe(2500);
  });

  it('stores every column of a row as given, JSON-text columns byte for byte (as text or object), and skips a retried insert with the same token', async () => {
    const properties = JSON.stringify({ a: 'x"y\\z\u0001 é 😀', n: 1.5, big: 2 ** 60, arr: [1, { b: null }], nested: { c: '\n' } });
    const exact: EventRow = {
      ...row(9000, '00000000-0000-4000-8000-000000009000'),
      event: 'quote " tab \t',
      distinct_id: 'new\nline',
      properties,
      person_properties: '{"email":"a@b.c"}',
      person_created_at: toClickHouseDateTime(Date.parse('2023-06-01T00:00:00.123Z')),
      group2_properties: '{"name":"acme"}',
      group2_created_at: toClickHouseDateTime(Date.parse('2022-01-01T00:00:00Z')),
      person_mode: 'propertyless',
    };
    const asObject: EventRow = { ...exact, uuid: '00000000-0000-4000-8000-000000009001', properties: JSON.parse(properties) as Record<string, unknown> };
    await insertEvents(ch, [exact, asObject], { deduplicationToken: 'exact-row' });
    await insertEvents(ch, [exact, asObject], { deduplicationToken: 'exact-row' });
    const stored = await (
      await ch.query({
        query: `SELECT event, distinct_id, properties, person_properties, person_created_at, group2_properties, group2_created_at, group1_properties, person_mode
                FROM events WHERE uuid IN ('00000000-0000-4000-8000-000000009000', '00000000-0000-4000-8000-000000009001') ORDER BY uuid`,
        format: 'JSONEachRow',
      })
    ).json<Record<string, string>>();
    const expected = {
      event: exact.event,
      distinct_id: exact.distinct_id,
      properties,
      person_properties: exact.person_properties,
      person_created_at: '2023-06-01 00:00:00.123',
      group2_properties: '{"name":"acme"}',
      group2_created_at: '2022-01-01 00:00:00.000',
      group1_properties: '',
      person_mode: 'propertyless',
    };
    expect(stored).toEqual([expected, expected]);
  });

  it('binds query parameters', async () => {
    const rows = await (
      await ch.query({
        query: "SELECT count() AS c FROM events FINAL WHERE team_id = {team:Int64} AND timestamp < {before:DateTime64(6, 'UTC')}",
        query_params: { team: 1, before: toClickHouseDateTime(Date.parse('2024-01-01T00:00:10Z')) },
        format: 'JSONEachRow',
      })
    ).json<{ c: string }>();
    expect(Number(rows[0]!.c)).toBe(10);
  });
});
