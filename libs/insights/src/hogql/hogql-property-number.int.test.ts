import { insertEvents, queryClickhouse } from '@sightline/clickhouse';
import { createHogQLCompiler, type HogQLCompiler } from '@sightline/hogql';
import { QueryParams } from '@sightline/properties';
import { createTestStores, testEventRow, type TestStores } from '@sightline/testkit';
import { runHogQLQuery } from './hogql-query';

/**
 * A property read as a number (toFloat, arithmetic, numeric comparison) answers what PostHog's
 * toFloat does: accurateCastOrNull(…, 'Float64') over the property's JSON text unquoted
 * (posthog/hogql/functions/mapping.py, the property printed as in posthog/hogql/printer), for
 * every kind of JSON value. The reference column runs PostHog's form on the same rows.
 */
const CASES: [name: string, value: unknown, expected: number | null][] = [
  ['a number', 12.5, 12.5],
  ['an integer', 3, 3],
  ['zero', 0, 0],
  ['one', 1, 1],
  ['a negative number', -7, -7],
  ['numeric text', '12.5', 12.5],
  ['numeric text one', '1', 1],
  ['numeric text zero', '0', 0],
  ['an exponent in text', '1e3', 1000],
  ['other text', 'abc', null],
  ['empty text', '', null],
  ['the text true', 'true', null],
  ['text with a space', ' 12', null],
  ['true', true, null],
  ['false', false, null],
  ['null', null, null],
  ['missing', undefined, null],
  ['an object', { a: 1 }, null],
  ['an array', [1], null],
];
const POSTHOG_TO_FLOAT = `accurateCastOrNull(replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(properties, 'x'), ''), 'null'), '^"|"$', ''), 'Float64')`;

describe('a property read as a number, for every kind of JSON value', () => {
  let stores: TestStores;
  let compiler: HogQLCompiler;
  const TEAM = 1;
  beforeAll(async () => {
    stores = await createTestStores('hogql_property_number');
    compiler = await createHogQLCompiler();
    await insertEvents(
      stores.ch,
      CASES.map(([name, value], i) =>
        testEventRow({
          teamId: TEAM,
          event: 'e',
          atMs: Date.parse('2024-01-10T00:00:00Z') + i * 1000,
          distinctId: name,
          properties: value === undefined ? {} : { x: value },
        }),
      ),
    );
  });
  afterAll(async () => {
    await compiler.close();
    await stores.close();
  });

  const reference = async () => {
    const rows = await queryClickhouse<{ name: string; value: number | null }>(stores.ch, {
      kind: 'test',
      teamId: TEAM,
      sql: `SELECT distinct_id AS name, ${POSTHOG_TO_FLOAT} AS value FROM events WHERE team_id = {team:Int64}`,
      params: { team: TEAM },
    });
    return new Map(rows.map((r) => [r.name, r.value]));
  };

  it("answers PostHog's toFloat in a HogQL query: toFloat, arithmetic and comparison", async () => {
    const answer = await runHogQLQuery(
      stores.ch,
      { id: TEAM, timezone: 'UTC' },
      { query: 'SELECT distinct_id, toFloat(properties.x), properties.x * 1, properties.x >= 0 FROM events ORDER BY distinct_id', values: {} },
    );
    const posthog = await reference();
    const byName = new Map(answer.results.map((row) => [row[0] as string, row.slice(1)]));
    for (const [name, , expected] of CASES) {
      expect([name, posthog.get(name)]).toEqual([name, expected]);
      const [toFloat, times, atLeastZero] = byName.get(name)!;
      expect([name, toFloat, times]).toEqual([name, expected, expected]);
      if (expected !== null) expect([name, atLeastZero]).toEqual([name, expected >= 0 ? 1 : 0]);
    }
  });

  it("answers PostHog's toFloat in a trends expression (the expression printer)", async () => {
    const params = new QueryParams();
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
    const value = compiler.print(await compiler.parse('toFloat(properties.x)'), { params, fields, allowAggregations: false });
    const sum = compiler.print(await compiler.parse('properties.x + 0'), { params, fields, allowAggregations: false });
    const rows = await queryClickhouse<{ name: string; value: number | null; sum: number | null }>(stores.ch, {
      kind: 'test',
      teamId: TEAM,
      sql: `SELECT e.distinct_id AS name, ${value} AS value, ${sum} AS sum FROM events AS e WHERE e.team_id = {team:Int64}`,
      params: { ...params.values, team: TEAM },
    });
    const byName = new Map(rows.map((r) => [r.name, [r.value, r.sum]]));
    for (const [name, , expected] of CASES) expect([name, ...byName.get(name)!]).toEqual([name, expected, expected]);
  });
});
