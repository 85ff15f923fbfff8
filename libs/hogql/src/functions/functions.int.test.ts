import { createAnalyticsStore, queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import { QueryParams } from '@sightline/properties';
import {
  AGGREGATE_SAMPLES,
  aggregateSample,
  createTestClickHouseDatabase,
  FUNCTION_SAMPLES,
  SAMPLE_EVENT_FIELDS,
  SAMPLE_EVENTS_SQL,
  type TestClickHouseDatabase,
} from '@sightline/testkit';
import { createHogQLCompiler, type HogQLCompiler, type HogQLContext } from '../hogql-compiler';
import { HOGQL_AGGREGATIONS, HOGQL_FUNCTIONS } from './index';

/**
 * Every allowed function compiled from HogQL and run on the real ClickHouse engine (chdb): each
 * mapping is SQL ClickHouse accepts, with the arguments HogQL allows. PostHog checks its own
 * mapping the same way in posthog/hogql/functions/test/test_mapping.py (test_function_mapping,
 * test_postgres_functions), running queries through execute_hogql_query.
 */
const fields = SAMPLE_EVENT_FIELDS;
const EVENTS = SAMPLE_EVENTS_SQL;

describe('every allowed HogQL function on the ClickHouse engine', () => {
  let database: TestClickHouseDatabase;
  let ch: ClickHouseClient;
  let compiler: HogQLCompiler;
  beforeAll(async () => {
    database = await createTestClickHouseDatabase('hogql_functions');
    ch = createAnalyticsStore({ url: database.url, user: 'default', password: '', database: database.database });
    compiler = await createHogQLCompiler();
  });
  afterAll(async () => {
    await compiler.close();
    await ch.close();
    await database.drop();
  });

  /** Compiles a HogQL expression and runs it over the events above; answers the first row's value. */
  async function run(expression: string, aggregate: boolean, timezone?: string): Promise<unknown> {
    const params = new QueryParams();
    const ctx: HogQLContext = { params, fields, allowAggregations: aggregate, timezone };
    const sql = compiler.print(await compiler.parse(expression), ctx);
    const rows = await queryClickhouse<{ value: unknown }>(ch, {
      kind: 'test.hogql_functions',
      teamId: null,
      sql: `SELECT ${sql} AS value FROM ${EVENTS}`,
      params: params.values,
    });
    return rows[0]?.value;
  }

  it('has a sample for every per-row function and every explicit aggregate', () => {
    expect([...HOGQL_FUNCTIONS.keys()].filter((name) => !(name in FUNCTION_SAMPLES))).toEqual([]);
    expect(Object.keys(FUNCTION_SAMPLES).filter((name) => !HOGQL_FUNCTIONS.has(name))).toEqual([]);
    expect(Object.keys(AGGREGATE_SAMPLES).filter((name) => !HOGQL_AGGREGATIONS.has(name))).toEqual([]);
  });

  it.each([...HOGQL_FUNCTIONS.keys()].sort())('%s', async (name) => {
    const sample = FUNCTION_SAMPLES[name]!;
    expect(sample.startsWith(`${name}(`)).toBe(true);
    await expect(run(sample, false).then(() => 'ran')).resolves.toBe('ran');
  });

  it.each([...HOGQL_AGGREGATIONS.keys()].sort())('aggregate %s', async (name) => {
    const sample = aggregateSample(name);
    expect(sample.startsWith(`${name}(`)).toBe(true);
    await expect(run(sample, true).then(() => 'ran')).resolves.toBe('ran');
  });

  // posthog/hogql/functions/test/test_mapping.py: test_function_mapping, test_postgres_functions,
  // test_isValidJSON_function, test_JSONHas_function, test_json_functions_basic.
  it.each([
    ['toFloat(3.14)', 3.14],
    ['toFloat(NULL)', null],
    ["toFloatOrZero('3.14')", 3.14],
    ["toFloatOrZero('')", 0],
    ["toFloatOrZero('bla')", 0],
    ["date_trunc('hour', toDateTime('2023-01-01 13:45:32', 'UTC'))", '2023-01-01 13:00:00'],
    ["date_trunc('month', toDateTime('2023-01-01 13:45:32', 'UTC'))", '2023-01-01'],
    ["toStartOfInterval(toDateTime('2023-01-01 13:45:32', 'UTC'), toIntervalHour(1))", '2023-01-01 13:00:00'],
    ["toYear(toDateTime('2023-01-01 13:45:32'))", 2023],
    ["to_char(toDateTime('2023-01-01 13:45:32'), '%Y-%m-%d')", '2023-01-01'],
    ['make_date(2023, 1, 1)', '2023-01-01'],
    // toDateTime of text is a DateTime64(6), as PostHog's parseDateTime64BestEffortOrNull(…, 6, zone).
    ["date_add(toDateTime('2023-01-01 13:45:32', 'UTC'), toIntervalHour(1))", '2023-01-01 14:45:32.000000'],
    ["date_subtract(toDateTime('2023-01-01 13:45:32', 'UTC'), toIntervalHour(1))", '2023-01-01 12:45:32.000000'],
    ["date_diff('hour', toDateTime('2023-01-01 13:45:32'), toDateTime('2023-01-01 14:45:32'))", 1],
    ["to_date('2023-01-01')", '2023-01-01'],
    ["ascii('A')", 65],
    ["repeat('pg', 3)", 'pgpgpg'],
    ["initcap('hello world')", 'Hello World'],
    ["left('hello', 2)", 'he'],
    ["right('hello', 2)", 'lo'],
    ["lpad('hi', 5, 'xy')", 'xyxhi'],
    ["rpad('hi', 5, 'xy')", 'hixyx'],
    ["ltrim('  hello  ')", 'hello  '],
    ["rtrim('  hello  ')", '  hello'],
    ["btrim('  hello  ')", 'hello'],
    ['isValidJSON(\'{"valid": true}\')', 1],
    ["isValidJSON('invalid json')", 0],
    ['JSONHas(\'{"a": "hello", "b": [-100, 200.0, 300]}\', \'b\')', 1],
    ['JSONHas(\'{"a": "hello", "b": [-100, 200.0, 300]}\', \'nonexistent\')', 0],
    ['JSONLength(\'{"a": [1, 2, 3], "b": {"c": "hello"}}\')', 2],
    ["JSONArrayLength('[1, 2, 3, 4, 5]')", 5],
    ['JSONType(\'{"key": "value"}\', \'key\')', 'String'],
    ["JSONExtract('{\"num\": 42}', 'num', 'Int32')", 42],
    ['arrayMap(x -> x * 2, [1, 2, 3])', [2, 4, 6]],
    ['arrayFilter((x, keep) -> keep = 1, [10, 20, 30], [1, 0, 1])', [10, 30]],
    ['arrayMap(x -> arrayMap(y -> x + y, [1, 2]), [10])', [[11, 12]]],
    ["case event when 'signup' then 'S' when 'login' then 'L' else 'other' end", 'S'],
    ['range(5)', [0, 1, 2, 3, 4]],
    ["toStartOfWeek(toDateTime('2024-01-03 10:00:00', 'UTC'), 1)", '2024-01-01'],
  ])('%s is %j', async (expression, value) => {
    expect(await run(expression, false)).toEqual(value);
  });

  it.each([
    ['array_agg(event)', ['signup', 'signup', 'signup']],
    ["count() filter (where distinct_id = 'd1')", 1],
    ['argMax(distinct_id, timestamp)', 'd2'],
    ["sumArrayIf([toFloat(properties.price)], distinct_id != 'd0')", 28],
    ['quantiles(0, 1)(properties.price)', [12.5, 14.5]],
  ])('aggregate %s is %j', async (expression, value) => {
    expect(await run(expression, true)).toEqual(value);
  });

  // toDateTime as PostHog maps it (posthog/hogql/functions/mapping.py; test_printer.py
  // test_print_timezone, test_print_timezone_custom, test_override_timezone): text read in the
  // project's zone unless a zone is given, as a DateTime64(6) (the timestamp column's type, so a
  // comparison with it converts nothing per row); what is not a date-time is NULL.
  it.each([
    ["toTypeName(toDateTime('2024-01-02 00:00:00'))", 'UTC', "DateTime64(6, 'UTC')"],
    ["toTypeName(toDateTime('2024-01-02'))", 'Europe/Berlin', "DateTime64(6, 'Europe/Berlin')"],
    ['toTypeName(toDateTime(timestamp))', 'UTC', "DateTime('UTC')"],
    ["toUnixTimestamp(toDateTime('2024-01-02 00:00:00'))", 'UTC', 1704153600],
    ["toUnixTimestamp(toDateTime('2024-01-02 00:00:00'))", 'Europe/Berlin', 1704150000],
    ["toUnixTimestamp(toDateTime('2024-01-02'))", 'Europe/Berlin', 1704150000],
    ["toUnixTimestamp(toDateTime('2024-01-02 00:00:00', 'UTC'))", 'Europe/Berlin', 1704153600],
    ["toString(toDateTime('2024-01-02 03:04:05.123456'))", 'UTC', '2024-01-02 03:04:05.123456'],
    ["toString(toDateTime('2024-01-02T03:04:05Z'))", 'Europe/Berlin', '2024-01-02 04:04:05.000000'],
    ["toString(toDateTime('02/01/2024 03:04:05', 'UTC'))", 'Europe/Berlin', '2024-01-02 03:04:05.000000'],
    ["toDateTime('not a date', 'UTC')", 'UTC', null],
    ['toDateTime(properties.url)', 'UTC', null],
    ['toString(toDateTime(timestamp))', 'Asia/Tokyo', '2024-01-02 12:04:05'],
    ['toUnixTimestamp(toDateTime(1704153600))', 'Asia/Tokyo', 1704153600],
    // The first sample event is at 03:04:05 UTC, 04:04:05 in Berlin.
    ["timestamp >= toDateTime('2024-01-02 03:04:05') AND timestamp < toDateTime('2024-01-02 03:04:05.000001')", 'UTC', 1],
    ["timestamp >= toDateTime('2024-01-02 04:04:05')", 'UTC', 0],
    ["timestamp >= toDateTime('2024-01-02 04:04:05')", 'Europe/Berlin', 1],
  ])('%s in a project in %s is %j', async (expression, timezone, value) => {
    expect(await run(expression, false, timezone)).toEqual(value);
  });

  it("refuses a constant toDateTime cannot read, as PostHog's strict parse of a constant does", async () => {
    await expect(run("toDateTime('not a date')", false)).rejects.toThrow();
  });
});
