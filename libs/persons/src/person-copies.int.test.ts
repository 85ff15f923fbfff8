import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { boundAnalyticsReads, createAnalyticsStore, DEFAULT_ANALYTICS_QUERY_LIMITS, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { createTestClickHouseDatabase, type TestClickHouseDatabase } from '@sightline/testkit';
import { writeCopies, type PersonCopy, type PersonDistinctIdCopy } from './person-copies';

/** Copies at their edges: unicode and escapes in properties and ids, texts over 127 bytes (a two-byte length), big versions, deletions, times. */
const persons: PersonCopy[] = [
  {
    id: '0190a6f0-0000-5000-8000-000000000001',
    team_id: 1,
    created_at: '2024-02-29T23:59:59.999Z',
    properties: JSON.stringify({ email: 'a@b.c', q: 'x"y\\z\u0001\n', emoji: '👩‍👩‍👧 中文 é' }),
    is_identified: 1,
    is_deleted: 0,
    version: 0,
  },
  {
    id: 'FFFFFFFF-EEEE-4DDD-8CCC-BBBBBBBBBBBB',
    team_id: Number.MAX_SAFE_INTEGER,
    created_at: '1969-12-31T23:59:59.001Z',
    properties: JSON.stringify({ pad: 'x'.repeat(300) }),
    is_identified: 0,
    is_deleted: 1,
    version: 2 ** 40,
  },
  {
    id: '0190a6f0-0000-5000-8000-000000000003',
    team_id: 7,
    created_at: '2099-01-01T00:00:00.000Z',
    properties: '{}',
    is_identified: 0,
    is_deleted: 0,
    version: 3,
  },
];
const distinctIds: PersonDistinctIdCopy[] = [
  { team_id: 1, distinct_id: 'user-1', person_id: '0190a6f0-0000-5000-8000-000000000001', is_deleted: 0, version: 0 },
  { team_id: 1, distinct_id: 'quote " backslash \\ newline \n 😀', person_id: '0190a6f0-0000-5000-8000-000000000001', is_deleted: 0, version: 5 },
  { team_id: 2570, distinct_id: '中'.repeat(43), person_id: 'ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb', is_deleted: 1, version: 2 ** 40 },
];

// Over HTTP the copies go as RowBinary, to the in-process engine as JSONEachRow: both must store the same.
describe.each(['http', 'chdb'] as const)('writeCopies (%s)', (kind) => {
  let database: TestClickHouseDatabase | undefined;
  let dataDir: string | undefined;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    if (kind === 'http') {
      database = await createTestClickHouseDatabase('person_copies');
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

  it('stores every person and distinct-id copy exactly as given', async () => {
    await writeCopies(ch, { persons, distinctIds });
    const storedPersons = await (
      await ch.query({
        query: `SELECT toString(id) AS id, team_id, toString(created_at) AS created_at, properties,
                       is_identified, is_deleted, version FROM person ORDER BY id`,
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      })
    ).json<PersonCopy>();
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(storedPersons).toEqual(
      persons.map((p) => ({ ...p, id: p.id.toLowerCase(), created_at: p.created_at.replace('T', ' ').replace('Z', '') })).sort(byId),
    );
    const storedDistinctIds = await (
      await ch.query({
        query: 'SELECT team_id, distinct_id, toString(person_id) AS person_id, is_deleted, version FROM person_distinct_id2 ORDER BY team_id, distinct_id',
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      })
    ).json<PersonDistinctIdCopy>();
    const byKey = (a: PersonDistinctIdCopy, b: PersonDistinctIdCopy) => a.team_id - b.team_id || (a.distinct_id < b.distinct_id ? -1 : 1);
    expect(storedDistinctIds).toEqual([...distinctIds].sort(byKey));
  });

  // The api's client is a read-bounded proxy of the store (boundAnalyticsReads, and a project's own
  // time limit on top): its copies, e.g. a deleted person's, must take the store's body format.
  it('stores copies written through a read-bounded client of the store', async () => {
    const bounded = boundAnalyticsReads(ch, DEFAULT_ANALYTICS_QUERY_LIMITS);
    const person = { ...persons[0]!, id: '0190a6f0-0000-5000-8000-0000000000aa', version: 7 };
    await writeCopies(bounded, { persons: [person], distinctIds: [{ ...distinctIds[0]!, distinct_id: 'bounded', version: 7 }] });
    const stored = await (
      await ch.query({ query: "SELECT version FROM person WHERE id = '0190a6f0-0000-5000-8000-0000000000aa'", format: 'JSONEachRow' })
    ).json<{ version: number }>();
    expect(stored).toEqual([{ version: 7 }]);
  });

  if (kind === 'http') {
    it('sends person and distinct-id copies as RowBinary, no JSON to escape or parse', async () => {
      const exec = jest.spyOn(ch, 'exec');
      await writeCopies(ch, { persons: persons.slice(0, 1), distinctIds: distinctIds.slice(0, 1) });
      const queries = exec.mock.calls.map(([params]) => params.query).sort();
      exec.mockRestore();
      expect(queries).toEqual([
        'INSERT INTO person (id, created_at, team_id, properties, is_identified, is_deleted, version) FORMAT RowBinary',
        'INSERT INTO person_distinct_id2 (team_id, distinct_id, person_id, is_deleted, version) FORMAT RowBinary',
      ]);
    });
  }
});
