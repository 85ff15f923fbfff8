import { createAnalyticsStore, queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import { QueryParams } from '@sightline/properties';
import { createTestClickHouseDatabase, type TestClickHouseDatabase } from '@sightline/testkit';
import { createHogQLCompiler, type HogQLCompiler, type HogQLContext } from '../hogql-compiler';
import { AGGREGATE_SAMPLES, FUNCTION_SAMPLES } from '../testing/function-samples';
import { HOGQL_AGGREGATIONS, HOGQL_FUNCTIONS } from './index';

/**
 * Every allowed function compiled from HogQL and run on the real ClickHouse engine (chdb): each
 * mapping is SQL ClickHouse accepts, with the arguments HogQL allows. PostHog checks its own
 * mapping the same way in posthog/hogql/functions/test/test_mapping.py (test_function_mapping,
 * test_postgres_functions), running queries through execute_hogql_query.
 */
const fields = {
  event: 'e.event',
  timestamp: 'e.timestamp',
  distinct_id: 'e.distinct_id',
  person_id: 'e.person_id',
  elements_chain: 'e.elements_chain',
  properties: 'e.properties',
  person_properties: 'e.person_properties',
  group_properties: (i: number) => `e.group${i}_properties`,
};

/** Three events of one person: what the samples read. */
const EVENTS = `(
  SELECT
    'signup' AS event,
    toDateTime64('2024-01-02 03:04:05', 6, 'UTC') + toIntervalHour(number) AS timestamp,
    concat('d', toString(number)) AS distinct_id,
    toUUID('0190f2c3-6b1a-7c3d-8e4f-123456789abc') AS person_id,
    'a:href="/x"' AS elements_chain,
    concat('{"price": "', toString(12.5 + number), '", "n": ', toString(number + 1), ', "url": "https://www.example.com/a/b?x=1#f"}') AS properties,
    '{"plan": "pro"}' AS person_properties,
    '{}' AS group0_properties, '{}' AS group1_properties, '{}' AS group2_properties, '{}' AS group3_properties, '{}' AS group4_properties
  FROM system.numbers LIMIT 3
) AS e`;

/** The extra arguments each combinator suffix takes, in the order ClickHouse reads them. */
const COMBINATOR_ARGUMENTS: Record<string, string[]> = { If: ["event = 'signup'"], ArgMin: ['timestamp'], ArgMax: ['timestamp'] };
const COMBINED_BASE_ARGUMENT: Record<string, string> = {
  avg: 'toFloat(properties.price)',
  sum: 'toFloat(properties.price)',
  min: 'timestamp',
  max: 'timestamp',
  count: 'event',
  countDistinct: 'event',
  median: 'toFloat(properties.price)',
};

/** A call of a generated combinator form (sumArrayIf, countArgMax, …) from its base and suffixes. */
function combinatorSample(name: string): string {
  const base = Object.keys(COMBINED_BASE_ARGUMENT)
    .sort((a, b) => b.length - a.length)
    .find((candidate) => name.startsWith(candidate))!;
  const suffixes: string[] = name.slice(base.length).match(/If|Array|ForEach|OrDefault|OrNull|ArgMin|ArgMax/g) ?? [];
  let first = COMBINED_BASE_ARGUMENT[base]!;
  if (suffixes.includes('Array') || suffixes.includes('ForEach')) first = `[${first}]`;
  const args = [first, ...suffixes.flatMap((suffix) => COMBINATOR_ARGUMENTS[suffix] ?? [])];
  return `${name}(${args.join(', ')})`;
}

export const aggregateSample = (name: string): string => AGGREGATE_SAMPLES[name] ?? combinatorSample(name);

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
  async function run(expression: string, aggregate: boolean): Promise<unknown> {
    const params = new QueryParams();
    const ctx: HogQLContext = { params, fields, allowAggregations: aggregate };
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
});
