import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestClickHouseDatabase, type TestClickHouseDatabase } from '@sightline/testkit';
import { ClickHouseError } from '@clickhouse/client';
import { createAnalyticsStore, inProcessInsertOf, type ClickHouseClient } from '../analytics-store';
import { migrateClickHouse } from '../migrations';
import { EVENT_VALUES_COLUMNS, insertEventValues, writeEventValues, type EventValues } from './events.table';
import { insertJsonRows } from './table-inserts';
import { RowBinaryWriter } from './row-binary';

const base: EventValues = {
  uuid: '0190a6f0-0000-7000-8000-000000000001',
  event: '$pageview',
  properties: '{}',
  timestamp: Date.parse('2024-01-01T00:00:00.123Z'),
  team_id: 1,
  distinct_id: 'user-1',
  elements_chain: '',
  created_at: Date.parse('2024-01-01T00:00:01Z'),
  person_id: '0190a6f0-0000-5000-8000-000000000002',
  person_created_at: null,
  person_properties: '{}',
  person_mode: 'full',
  groups: [],
};

/** Every column type of the events table at its edges: text escapes, UTF-8 of 1–4 bytes, long strings, big numbers, time precision. */
const rows: EventValues[] = [
  // Two newline bytes in a row, in the binary body (2570 = 0x0A0A) and in a string: the rows after them must land too.
  { ...base, uuid: '0190a6f0-0000-7000-8000-000000000004', team_id: 2570, event: 'blank\n\nline' },
  base,
  {
    ...base,
    uuid: 'FFFFFFFF-EEEE-4DDD-8CCC-BBBBBBBBBBBB',
    event: 'quote " backslash \\ newline \n tab \t nul \u0000',
    properties: { a: 'x"y\\z\u0001 é 😀 中文', n: 1.5, big: 2 ** 60, neg: -0.000001, arr: [1, { b: null }], nested: { c: '\n' } },
    timestamp: Date.parse('2024-02-29T23:59:59.999Z') + 0.456, // microseconds kept by DateTime64(6)
    team_id: Number.MAX_SAFE_INTEGER,
    distinct_id: 'é'.repeat(42), // 84 bytes: the one-byte length written after the text
    elements_chain: 'a:nth-child="1"nth-of-type="2"',
    created_at: Date.parse('1969-12-31T23:59:59.999Z'), // before the epoch: negative ticks
    person_id: '00000000-0000-0000-0000-000000000000',
    person_created_at: Date.parse('2023-06-01T00:00:00.123Z'),
    person_properties: JSON.stringify({ email: 'a@b.c', emoji: '👩‍👩‍👧' }),
    person_mode: 'propertyless',
    groups: [
      { index: 4, propertiesJson: '{"name":"acme"}', createdAtMs: Date.parse('2022-01-01T00:00:00.5Z') },
      { index: 0, propertiesJson: '{"k":"中"}', createdAtMs: Date.parse('2099-12-31T23:59:59.999Z') },
    ],
  },
  {
    ...base,
    uuid: '0190a6f0-0000-7000-8000-000000000003',
    event: '😀'.repeat(21), // 42 UTF-16 units, 84 bytes
    distinct_id: '中'.repeat(43), // 129 bytes: a two-byte length
    properties: JSON.stringify({ pad: 'x'.repeat(20_000) }), // a three-byte length
    team_id: -5,
    person_mode: 'force_upgrade',
    person_properties: '',
    groups: [{ index: 2, propertiesJson: '', createdAtMs: 0 }],
  },
];

const selectColumns = EVENT_VALUES_COLUMNS.join(', ');

async function bytesOf(ch: ClickHouseClient, query: string): Promise<Buffer> {
  const { stream } = await ch.exec({ query });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

// Over HTTP the rows go as RowBinary, to the in-process engine as JSONEachRow: both must store the same.
describe.each(['http', 'chdb'] as const)('insertEventValues (%s)', (kind) => {
  let database: TestClickHouseDatabase | undefined;
  let dataDir: string | undefined;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    if (kind === 'http') {
      database = await createTestClickHouseDatabase('event_values');
      ch = createAnalyticsStore({ url: database.url, user: 'default', password: '', database: database.database });
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'sightline-chdb-'));
      ch = createAnalyticsStore({ user: 'default', password: '', database: 'default', dataDir });
    }
    await migrateClickHouse(ch);
  });
  afterAll(async () => {
    await ch.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('stores every column as given: ClickHouse writes the rows back as exactly the RowBinary bytes the writer made', async () => {
    await insertEventValues(ch, rows, (row) => row, { deduplicationToken: `values-${kind}` });
    const stored = await bytesOf(ch, `SELECT ${selectColumns} FROM events ORDER BY uuid FORMAT RowBinary`);
    const expected = new RowBinaryWriter(16);
    for (const row of [...rows].sort((a, b) => a.uuid.toLowerCase().localeCompare(b.uuid.toLowerCase()))) writeEventValues(expected, row);
    expect(stored.toString('hex')).toBe(expected.bytes().toString('hex'));
  });

  it('stores the values themselves (read back as text): times to the microsecond, big numbers, unicode, absent groups as defaults', async () => {
    const stored = await (
      await ch.query({
        query: `SELECT toString(uuid) AS uuid, event, properties, toString(timestamp) AS timestamp, toString(team_id) AS team_id, distinct_id,
                       toString(created_at) AS created_at, toString(person_created_at) AS person_created_at, person_mode,
                       group0_properties, toString(group0_created_at) AS group0_created_at, group3_properties, group4_properties
                FROM events WHERE uuid = 'ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb'`,
        format: 'JSONEachRow',
      })
    ).json<Record<string, string>>();
    expect(stored).toEqual([
      {
        uuid: 'ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb',
        event: rows[2]!.event,
        properties: JSON.stringify(rows[2]!.properties),
        timestamp: '2024-02-29 23:59:59.999456',
        team_id: '9007199254740991',
        distinct_id: rows[2]!.distinct_id,
        created_at: '1969-12-31 23:59:59.999000',
        person_created_at: '2023-06-01 00:00:00.123',
        person_mode: 'propertyless',
        group0_properties: '{"k":"中"}',
        group0_created_at: '2099-12-31 23:59:59.999',
        group3_properties: '',
        group4_properties: '{"name":"acme"}',
      },
    ]);
  });

  it('skips a retried insert with the same deduplication token, and sends nothing for no rows', async () => {
    await insertEventValues(ch, rows, (row) => row, { deduplicationToken: `values-${kind}` });
    await insertEventValues(ch, [], (row) => row);
    const counted = await (await ch.query({ query: 'SELECT count() AS c FROM events', format: 'JSONEachRow' })).json<{ c: string }>();
    expect(Number(counted[0]!.c)).toBe(rows.length);
  });
});

// The in-process engine takes inserts through chdb's raw insert (analytics-store.ts): the same
// settings as every other statement, for the insert only, and the server's errors as the client's.
describe('inserts on the in-process engine', () => {
  let dataDir: string;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-chdb-raw-'));
    ch = createAnalyticsStore({ user: 'default', password: '', database: 'default', dataDir });
    await migrateClickHouse(ch);
  });
  afterAll(async () => {
    await ch.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('go through the raw insert, which the client over HTTP has not', () => {
    expect(inProcessInsertOf(ch)).toBeInstanceOf(Function);
    expect(inProcessInsertOf(createAnalyticsStore({ url: 'http://127.0.0.1:1', user: 'default', password: '', database: 'default' }))).toBeUndefined();
  });

  it("run with the store's settings whatever a read left on the session", async () => {
    // A request's limits are SET on the session and outlast their query (queryClickhouse).
    await ch.command({ query: 'SET max_execution_time = 0.000001, max_memory_usage = 1' });
    await insertEventValues(ch, rows, (row) => row);
    const counted = await (await ch.query({ query: 'SELECT count() AS c FROM events', format: 'JSONEachRow' })).json<{ c: string }>();
    expect(Number(counted[0]!.c)).toBe(rows.length);
  });

  it('land side by side: the worker writes the events and the person copies at once', async () => {
    const before = await (await ch.query({ query: 'SELECT count() AS c FROM events', format: 'JSONEachRow' })).json<{ c: string }>();
    const batches = Array.from({ length: 12 }, (_, b) =>
      rows.map((row, i) => ({ ...row, uuid: `5dde0000-0000-7000-8000-${String(b * 100 + i).padStart(12, '0')}` })),
    );
    await Promise.all(batches.map((batch, b) => insertEventValues(ch, batch, (row) => row, { deduplicationToken: `side-by-side-${b}` })));
    const after = await (await ch.query({ query: 'SELECT count() AS c FROM events', format: 'JSONEachRow' })).json<{ c: string }>();
    expect(Number(after[0]!.c) - Number(before[0]!.c)).toBe(12 * rows.length);
  });

  it('fail on a row the server cannot read with its error code, as over HTTP (the worker dead-letters by it)', async () => {
    const error = await insertJsonRows(ch, 'events', [{ uuid: 'not-a-uuid', event: 'e' }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClickHouseError);
    expect((error as ClickHouseError).code).toMatch(/^\d+$/);
    expect((error as ClickHouseError).message).toContain('not-a-uuid');
  });
});
