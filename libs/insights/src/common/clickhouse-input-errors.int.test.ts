import { createAnalyticsStore, type ClickHouseClient } from '@sightline/clickhouse';
import { createTestClickHouseDatabase, type TestClickHouseDatabase } from '@sightline/testkit';
import { CLICKHOUSE_INPUT_ERROR_CODES, clickHouseInputError, unknownTimeZoneOf } from './clickhouse-input-errors';

describe('ClickHouse errors a client input causes', () => {
  let database: TestClickHouseDatabase;
  let ch: ClickHouseClient;
  beforeAll(async () => {
    database = await createTestClickHouseDatabase('inputerrors');
    ch = createAnalyticsStore({ url: database.url, user: 'default', password: '', database: database.database });
  });
  afterAll(async () => {
    await ch.close();
    await database.drop();
  });

  const failure = async (query: string) =>
    ch.query({ query, format: 'JSONEachRow' }).then(
      () => null,
      (error: unknown) => error,
    );

  it('are named by ClickHouse as the table names them', async () => {
    const codes = [...CLICKHOUSE_INPUT_ERROR_CODES.keys()];
    const rows = await (
      await ch.query({
        query: 'SELECT code, errorCodeToName(code) AS name FROM (SELECT arrayJoin({codes:Array(Int32)}) AS code)',
        query_params: { codes },
        format: 'JSONEachRow',
      })
    ).json<{ code: number; name: string }>();
    expect(new Map(rows.map((row) => [Number(row.code), row.name]))).toEqual(CLICKHOUSE_INPUT_ERROR_CODES);
  });

  it('are recognised by code, whatever the client reads as their type', async () => {
    // "Illegal type (UUID) of 1 argument of function and": the client takes the parenthesised
    // word for the error's type; the code says what it is.
    const error = await failure("SELECT 1 WHERE toUUID('00000000-0000-0000-0000-000000000000') AND 1");
    expect(clickHouseInputError(error)).toEqual({ type: 'ILLEGAL_TYPE_OF_ARGUMENT', explanation: expect.any(String) });
    expect(clickHouseInputError(await failure("SELECT toDateTime(now(), 'Nowhere/Zone')"))).toMatchObject({ type: 'BAD_ARGUMENTS' });
    expect(unknownTimeZoneOf(await failure("SELECT toDate(now(), 'US/Pacific-New')"))).toBe('US/Pacific-New');
    // A HogQL breakdown `toIntervalDay(person.id)` (found by the HogQL fuzz): a UUID made a number.
    expect(clickHouseInputError(await failure('SELECT toIntervalDay(generateUUIDv4())'))).toMatchObject({ type: 'NOT_IMPLEMENTED' });
    expect(clickHouseInputError(await failure('SELECT * FROM no_such_table'))).toBeNull();
  });
});
