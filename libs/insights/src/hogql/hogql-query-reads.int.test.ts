import { insertEvents, queryClickhouse } from '@sightline/clickhouse';
import { compileSelect, createHogQLCompiler, type HogQLCompiler } from '@sightline/hogql';
import { createTestStores, testEventRow, type TestStores } from '@sightline/testkit';
import { runHogQLQuery } from './hogql-query';

/**
 * What a HogQL query reads of events: a time range is served by the table's primary key
 * (toDate(timestamp) is in its sort key), so a query over one month reads that month's rows,
 * not every month's. ClickHouse's `max_rows_to_read` tells: past it the query fails.
 */
describe('HogQL reads only the events its time range needs', () => {
  let stores: TestStores;
  let compiler: HogQLCompiler;
  const PER_MONTH = 40;
  beforeAll(async () => {
    stores = await createTestStores('hogql_reads');
    compiler = await createHogQLCompiler();
    // One insert per month: a part per month, as the table is partitioned by month.
    for (const month of ['2024-01', '2024-02', '2024-03']) {
      await insertEvents(
        stores.ch,
        Array.from({ length: PER_MONTH }, (_, i) => testEventRow({ event: 'e', atMs: Date.parse(`${month}-10T00:00:00Z`) + i * 60_000, distinctId: `d${i}` })),
      );
    }
  });
  afterAll(async () => {
    await compiler.close();
    await stores.close();
  });

  const count = async (query: string, timezone: string) => {
    const compiled = compileSelect(await compiler.parseSelect(query), { teamId: 1, timezone, text: query, limits: { default: 100, max: 50_000 } });
    const rows = await queryClickhouse<{ n: string }>(stores.ch, {
      kind: 'hogql',
      teamId: 1,
      sql: compiled.sql,
      params: compiled.params,
      // More than one month's rows, fewer than two months'.
      settings: { max_rows_to_read: String(PER_MONTH + PER_MONTH / 2), read_overflow_mode: 'throw' },
    });
    return Number(rows[0]!['n']);
  };

  it('reads one month of a UTC project for a query over that month', async () => {
    const february = "SELECT count() AS n FROM events WHERE timestamp >= toDateTime('2024-02-01 00:00:00') AND timestamp < toDateTime('2024-03-01 00:00:00')";
    await expect(count(february, 'UTC')).resolves.toBe(PER_MONTH);
    // The bound is real: a query over every month is stopped by it.
    await expect(count('SELECT count() AS n FROM events', 'UTC')).rejects.toMatchObject({ code: '158' });
  });

  it('counts a redelivered event once (the same row written again by a later insert), as trends do', async () => {
    const team = 2;
    const redelivered = testEventRow({ teamId: team, event: 'e', atMs: Date.parse('2024-02-10T00:00:00Z'), distinctId: 'r' });
    await insertEvents(stores.ch, [redelivered]);
    // The retried batch holds it beside a new event (an identical block would be skipped as a duplicate insert).
    await insertEvents(stores.ch, [redelivered, testEventRow({ teamId: team, event: 'e', atMs: Date.parse('2024-02-10T00:00:01Z'), distinctId: 's' })]);
    const stored = await queryClickhouse<{ n: string }>(stores.ch, {
      kind: 'test',
      teamId: team,
      sql: 'SELECT count() AS n FROM events WHERE team_id = {team:Int64} AND uuid = {uuid:UUID}',
      params: { team, uuid: redelivered.uuid },
    });
    expect(Number(stored[0]!['n'])).toBe(2);
    const answer = await runHogQLQuery(
      stores.ch,
      { id: team, timezone: 'UTC' },
      { query: 'SELECT distinct_id, count() FROM events GROUP BY distinct_id ORDER BY distinct_id', values: {} },
    );
    expect(answer.results).toEqual([
      ['r', 1],
      ['s', 1],
    ]);
  });

  describe("the conditions on the sort key are applied below FINAL too, in the key's UTC days", () => {
    const team = 3;
    const read = async (sql: string, params: Record<string, unknown>, maxRows: number) => {
      const rows = await queryClickhouse<{ n: string }>(stores.ch, {
        kind: 'hogql',
        teamId: team,
        sql,
        params,
        settings: { max_rows_to_read: String(maxRows), read_overflow_mode: 'throw' },
      });
      return Number(rows[0]!['n']);
    };
    const compile = async (text: string, timezone: string) =>
      compileSelect(await compiler.parseSelect(text), { teamId: team, timezone, text, limits: { default: 100, max: 50_000 } });
    beforeAll(async () => {
      // A part per event and month: what the sort key (team_id, day, event, …) lets a read skip.
      for (const [event, month] of [
        ['e', '2024-01'],
        ['e', '2024-02'],
        ['other', '2024-02'],
        ['e', '2024-03'],
      ] as const) {
        await insertEvents(
          stores.ch,
          Array.from({ length: PER_MONTH }, (_, i) =>
            testEventRow({ teamId: team, event, atMs: Date.parse(`${month}-10T00:00:00Z`) + i * 60_000, distinctId: `d${i}` }),
          ),
        );
      }
    });

    it('reads no more rows for one event over one month of a project in another time zone than the hand-written SQL', async () => {
      // The project's dates are read through toTimeZone, which ClickHouse's key analysis cannot see through.
      const compiled = await compile(
        "SELECT count() AS n FROM events WHERE event = 'e' AND timestamp >= toDateTime('2024-02-01 00:00:00') AND timestamp < toDateTime('2024-03-01 00:00:00')",
        'Europe/Berlin',
      );
      // The hand-written SQL reads the one part of the event's rows that month: the bound is just above it.
      const bound = PER_MONTH + PER_MONTH / 2;
      const baseline = `SELECT count() AS n FROM events FINAL WHERE team_id = {team:Int64} AND event = 'e'
        AND timestamp >= toDateTime('2024-02-01 00:00:00', 'Europe/Berlin') AND timestamp < toDateTime('2024-03-01 00:00:00', 'Europe/Berlin')`;
      await expect(read(baseline, { team }, bound)).resolves.toBe(PER_MONTH);
      await expect(read(compiled.sql, compiled.params, bound)).resolves.toBe(PER_MONTH);
    });

    it('still counts a redelivered event once with the conditions applied first', async () => {
      const redelivered = testEventRow({ teamId: team, event: 'r', atMs: Date.parse('2024-02-12T00:00:00Z'), distinctId: 'r' });
      await insertEvents(stores.ch, [redelivered]);
      await insertEvents(stores.ch, [redelivered, testEventRow({ teamId: team, event: 'r', atMs: Date.parse('2024-02-12T00:00:01Z'), distinctId: 's' })]);
      const stored = await read('SELECT count() AS n FROM events WHERE team_id = {team:Int64} AND uuid = {uuid:UUID}', { team, uuid: redelivered.uuid }, 1_000);
      expect(stored).toBe(2);
      const compiled = await compile(
        "SELECT count() AS n FROM events WHERE event = 'r' AND timestamp >= toDateTime('2024-02-01 00:00:00') AND timestamp < toDateTime('2024-03-01 00:00:00')",
        'UTC',
      );
      expect(compiled.sql).toMatch(/WHERE src\.team_id = \{h\d+:Int64\} AND \(src\.event = /);
      await expect(read(compiled.sql, compiled.params, 1_000)).resolves.toBe(2);
    });
  });
});
