/**
 * The compiled SQL as ClickHouse itself reads it (chdb, the same engine as the server): every
 * operator and nesting is accepted by EXPLAIN, and selects exactly the rows the query-side
 * semantics say on real event rows.
 */
import { createAnalyticsStore, EVENTS_TABLE, insertEvents, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { createTestClickHouseDatabase, testEventRow, type TestClickHouseDatabase } from '@sightline/testkit';
import { compilePropertyGroup, eventsTablePropertiesColumn } from './compile';
import { QueryParams } from './query-params';
import { parsePropertyFilters } from './parse';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const types = { types: new Set(['event', 'person', 'group']) };

describe('property filters compiled for ClickHouse', () => {
  let chDb: TestClickHouseDatabase;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    chDb = await createTestClickHouseDatabase('properties');
    ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(ch);
    const row = (
      distinctId: string,
      properties: Record<string, unknown>,
      personProperties: Record<string, unknown> = {},
      group: Record<string, unknown> = {},
    ) => testEventRow({ event: 'e', atMs: NOW, distinctId, properties, personProperties, groupProperties: { 1: group } });
    await insertEvents(ch, [
      row('a', { plan: 'pro', n: 5, ok: true, url: 'https://x.io/Pricing', signed_up: '2024-01-08T10:00:00Z' }, { email: 'a@x.io' }, { name: 'Acme' }),
      row('b', { plan: 'Pro', n: '12', ok: false, url: 'https://x.io/docs', signed_up: '2023-12-01' }, { email: 'b@y.io' }),
      row('c', { plan: null, n: 'many', tags: ['a', 'b'] }),
      row('d', {}),
    ]);
  });
  afterAll(async () => {
    await ch.close();
    await chDb.drop();
  });

  async function matching(properties: unknown): Promise<string[]> {
    const params = new QueryParams();
    const where = compilePropertyGroup(parsePropertyFilters(properties, 'properties', types), {
      params,
      propertiesColumn: eventsTablePropertiesColumn,
      nowMs: NOW,
    });
    const query = `SELECT distinct_id FROM ${EVENTS_TABLE} WHERE team_id = 1 AND ${where} ORDER BY distinct_id`;
    // ClickHouse parses and analyses the generated SQL before it is trusted with data.
    await (await ch.query({ query: `EXPLAIN SYNTAX ${query}`, query_params: params.values, format: 'TabSeparated' })).text();
    return (await (await ch.query({ query, query_params: params.values, format: 'JSONEachRow' })).json<{ distinct_id: string }>()).map((r) => r.distinct_id);
  }

  it.each<[string, unknown, string[]]>([
    ['exact is case-sensitive text', [{ key: 'plan', value: 'pro' }], ['a']],
    ['exact with a list', [{ key: 'plan', value: ['pro', 'Pro'] }], ['a', 'b']],
    [
      'exact compares numbers and booleans by their text',
      [
        { key: 'n', value: 5 },
        { key: 'ok', value: true },
      ],
      ['a'],
    ],
    ['is_not matches a missing or null property', [{ key: 'plan', value: 'pro', operator: 'is_not' }], ['b', 'c', 'd']],
    ['is_set ignores null values', [{ key: 'plan', operator: 'is_set' }], ['a', 'b']],
    ['is_not_set', [{ key: 'plan', operator: 'is_not_set' }], ['c', 'd']],
    ['icontains is case-insensitive, with LIKE characters taken literally', [{ key: 'url', value: 'PRICING', operator: 'icontains' }], ['a']],
    ['not_icontains matches a missing property', [{ key: 'url', value: 'pricing', operator: 'not_icontains' }], ['b', 'c', 'd']],
    ['regex with RE2 syntax', [{ key: 'url', value: '/(docs|blog)$', operator: 'regex' }], ['b']],
    ['not_regex', [{ key: 'url', value: 'docs', operator: 'not_regex' }], ['a', 'c', 'd']],
    ['numeric operators read numbers and numeric text only', [{ key: 'n', value: 4, operator: 'gt' }], ['a', 'b']],
    ['lte', [{ key: 'n', value: 5, operator: 'lte' }], ['a']],
    ['between', [{ key: 'n', value: [6, 20], operator: 'between' }], ['b']],
    ['dates relative to now', [{ key: 'signed_up', value: '-7d', operator: 'is_date_after' }], ['a']],
    ['dates absolute', [{ key: 'signed_up', value: '2024-01-01', operator: 'is_date_before' }], ['b']],
    ['person properties', [{ key: 'email', value: '@y.io', operator: 'icontains', type: 'person' }], ['b']],
    ['group properties', [{ key: 'name', value: 'Acme', type: 'group', group_type_index: 1 }], ['a']],
    [
      'nested OR inside AND',
      {
        type: 'AND',
        values: [
          {
            type: 'OR',
            values: [
              { key: 'plan', value: 'pro' },
              { key: 'n', value: 10, operator: 'gt' },
            ],
          },
          { key: 'url', operator: 'is_set' },
        ],
      },
      ['a', 'b'],
    ],
  ])('%s', async (_name, properties, expected) => {
    expect(await matching(properties)).toEqual(expected);
  });
});
