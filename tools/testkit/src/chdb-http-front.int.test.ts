import { Readable } from 'node:stream';
import { ClickHouseError, ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { createTestClickHouseDatabase, testServices, type TestClickHouseDatabase } from './index';

/** The real @clickhouse/client against the chdb HTTP front started by global setup. */
describe('chdb ClickHouse HTTP front', () => {
  let db: TestClickHouseDatabase;
  let client: ClickHouseClient;

  const clientFor = (database: string, options: Parameters<typeof createClient>[0] = {}) =>
    createClient({ url: testServices().clickhouseUrl, database, log: { level: ClickHouseLogLevel.OFF }, ...options });

  beforeAll(async () => {
    db = await createTestClickHouseDatabase('testkit_ch');
    client = clientFor(db.database);
  });

  afterAll(async () => {
    await client.close();
    await db.drop();
  });

  it('answers ping', async () => {
    expect(await client.ping()).toEqual({ success: true });
  });

  it('inserts 10k JSONEachRow rows into a MergeTree table and queries them with parameters', async () => {
    await client.command({
      query: `CREATE TABLE events (id UInt32, name String, tags Array(String), ts DateTime64(3, 'UTC'))
              ENGINE = MergeTree ORDER BY id`,
    });
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      id: i,
      name: i % 2 === 0 ? 'even' : "it's odd",
      tags: [`t${i % 3}`],
      ts: '2024-05-01 12:00:00.000',
    }));
    const inserted = await client.insert({ table: 'events', values: rows, format: 'JSONEachRow' });
    expect(inserted.summary?.written_rows).toBe('10000');

    const result = await client.query({
      query: `SELECT count() AS n, min(id) AS first FROM events
              WHERE name = {name:String} AND id >= {from:UInt32} AND has({tags:Array(String)}, tags[1])`,
      query_params: { name: "it's odd", from: 100, tags: ['t0', "x'y"] },
      format: 'JSONEachRow',
    });
    // Odd ids from 101 with id % 3 == 0: 105, 111, ..., 9999.
    expect(await result.json()).toEqual([{ n: 1650, first: 105 }]);
  });

  it('deduplicates a ReplacingMergeTree table with FINAL', async () => {
    await client.command({
      query: 'CREATE TABLE persons (id String, version UInt32, email String) ENGINE = ReplacingMergeTree(version) ORDER BY id',
    });
    await client.insert({ table: 'persons', values: [{ id: 'p1', version: 1, email: 'old@example.com' }], format: 'JSONEachRow' });
    await client.insert({ table: 'persons', values: [{ id: 'p1', version: 2, email: 'new@example.com' }], format: 'JSONEachRow' });

    const all = await client.query({ query: 'SELECT count() AS n FROM persons', format: 'JSONEachRow' });
    expect(await all.json()).toEqual([{ n: 2 }]);
    const latest = await client.query({ query: 'SELECT id, email FROM persons FINAL', format: 'JSONEachRow' });
    expect(await latest.json()).toEqual([{ id: 'p1', email: 'new@example.com' }]);
  });

  it('keeps databases apart', async () => {
    const other = await createTestClickHouseDatabase('testkit_ch_other');
    const otherClient = clientFor(other.database);
    try {
      await otherClient.command({ query: 'CREATE TABLE persons (id String) ENGINE = MergeTree ORDER BY id' });
      await otherClient.insert({ table: 'persons', values: [{ id: 'only-here' }], format: 'JSONEachRow' });

      const here = await otherClient.query({ query: 'SELECT currentDatabase() AS db, count() AS n FROM persons', format: 'JSONEachRow' });
      expect(await here.json()).toEqual([{ db: other.database, n: 1 }]);
      const there = await client.query({ query: "SELECT count() AS n FROM persons WHERE id = 'only-here'", format: 'JSONEachRow' });
      expect(await there.json()).toEqual([{ n: 0 }]);
    } finally {
      await otherClient.close();
      await other.drop();
    }
  });

  it('applies settings to one request only', async () => {
    // Like ClickHouse >= 25.8, 64-bit integers are unquoted in JSON by default.
    const query = 'SELECT toUInt64(42) AS v';
    const quoted = await client.query({ query, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 1 } });
    expect(await quoted.json()).toEqual([{ v: '42' }]);
    const plain = await client.query({ query, format: 'JSONEachRow' });
    expect(await plain.json()).toEqual([{ v: 42 }]);
  });

  it("applies an insert's settings to that insert only, whether in the URL or in its own statement", async () => {
    await client.command({ query: 'CREATE TABLE tokens (id UInt32) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100' });
    const insert = (id: number, settings: Record<string, string> = {}) =>
      client.insert({ table: 'tokens', values: [{ id }], format: 'JSONEachRow', clickhouse_settings: settings });
    await insert(1, { insert_deduplication_token: 'same' });
    await insert(2, { insert_deduplication_token: 'same' }); // skipped: a token already seen
    await insert(3); // no token: the last request's setting did not stay on the engine's session
    const { stream } = await client.exec({
      query: "INSERT INTO tokens SETTINGS insert_deduplication_token = 'same' FORMAT JSONEachRow",
      values: Readable.from([JSON.stringify({ id: 4 })]),
      clickhouse_settings: { date_time_input_format: 'best_effort' },
    });
    for await (const _ of stream) void _;
    const stored = await client.query({ query: 'SELECT groupArray(id) AS ids FROM (SELECT id FROM tokens ORDER BY id)', format: 'JSONEachRow' });
    expect(await stored.json()).toEqual([{ ids: [1, 3] }]);
    const session = await client.query({ query: "SELECT value FROM system.settings WHERE name = 'insert_deduplication_token'", format: 'JSONEachRow' });
    expect(await session.json()).toEqual([{ value: '' }]);
  });

  it('works with request and response compression', async () => {
    const compressed = clientFor(db.database, { compression: { request: true, response: true } });
    try {
      await compressed.command({ query: 'CREATE TABLE compressed (id UInt32) ENGINE = MergeTree ORDER BY id' });
      await compressed.insert({ table: 'compressed', values: [{ id: 1 }, { id: 2 }], format: 'JSONEachRow' });
      const result = await compressed.query({ query: 'SELECT sum(id) AS total FROM compressed', format: 'JSONEachRow' });
      expect(await result.json()).toEqual([{ total: 3 }]);
    } finally {
      await compressed.close();
    }
  });

  it("hands nothing of a statement that failed mid-stream to the next request's answer", async () => {
    // Bare requests (no settings, so no SET statements around them): the engine kept the failed
    // statement's first blocks and put them in front of the next statement's output.
    const post = (sql: string) => fetch(`${testServices().clickhouseUrl}?database=${db.database}`, { method: 'POST', body: sql });
    for (let attempt = 0; attempt < 3; attempt++) {
      const failed = await post('SELECT number FROM numbers(100000) WHERE throwIf(number = 90000) = 0 SETTINGS max_block_size = 1000');
      expect(failed.status).toBe(500);
      await failed.text();
      const next = await post("SELECT 'next'");
      expect(await next.text()).toBe('next\n');
    }
  });

  it('raises ClickHouseError with the server error code', async () => {
    const failure = client.query({ query: 'SELECT * FROM no_such_table', format: 'JSONEachRow' });
    await expect(failure).rejects.toBeInstanceOf(ClickHouseError);
    await expect(failure).rejects.toMatchObject({ code: '60', type: 'UNKNOWN_TABLE' });
    await expect(client.command({ query: 'SELECT * FROM' })).rejects.toMatchObject({ code: '62', type: 'SYNTAX_ERROR' });
  });
});
