import fc from 'fast-check';
import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { hogqlExpression, testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
/** Queries per run: a few seconds by default; HOGQL_SELECT_FUZZ_RUNS for a longer one. */
const RUNS = Number(process.env['HOGQL_SELECT_FUZZ_RUNS'] ?? 60);

/** Words of SQL and HogQL, the names that must be refused beside the ones that resolve. */
const TOKENS = [
  'SELECT',
  'FROM',
  'WHERE',
  'GROUP BY',
  'ORDER BY',
  'LIMIT',
  'OFFSET',
  'UNION ALL',
  'JOIN',
  'LEFT JOIN',
  'ON',
  'USING',
  'AS',
  'WITH',
  'IN',
  'NOT',
  'AND',
  'OR',
  'BY',
  'OVER',
  'PARTITION',
  'SETTINGS',
  'FORMAT',
  'INTO OUTFILE',
  'ARRAY JOIN',
  'FINAL',
  'SAMPLE',
  ';',
  '(',
  ')',
  '[',
  ']',
  ',',
  '.',
  '*',
  '=',
  '!=',
  '+',
  '-',
  '/',
  '%',
  '->',
  '{p}',
  '{x}',
  '--',
  '/*',
  '*/',
  '`',
  "'",
  '"',
  'events',
  'persons',
  'person_distinct_ids',
  'groups',
  'static_cohort_people',
  'system.tables',
  'system.one',
  'information_schema.tables',
  "file('/etc/passwd')",
  "url('http://127.0.0.1')",
  'numbers(1000000000000)',
  "remote('x', system.one)",
  'cluster',
  'default.events',
  'event',
  'properties.$browser',
  'person.properties.email',
  'person_id',
  'pdi.person_id',
  '$group_0',
  'group_0.properties.name',
  'count()',
  'sum(1)',
  'arrayMap(x -> x * 2, [1, 2])',
  'row_number()',
  'sleep(1)',
  'constructor',
  '__proto__',
  '__t0',
  'team_id',
  '1',
  '0',
  '-9223372036854775809',
  '18446744073709551616',
  '1e309',
  'NULL',
  'true',
  "'x'",
  "'\\''",
  "'\\\\'",
  'toString',
];

const tokens = fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 25 }).map((t) => t.join(' '));
const nested = fc.tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom('(', 'f(', '[', '(SELECT ')).map(([n, open]) => {
  const close = open === '[' ? ']' : ')';
  return `SELECT ${open.repeat(n)}1${close.repeat(n)}`;
});
const subqueries = fc.integer({ min: 1, max: 14 }).map((n) => {
  let query = 'SELECT event FROM events';
  for (let i = 0; i < n; i++) query = `SELECT event FROM (${query})`;
  return query;
});
const hugeLiteral = fc.integer({ min: 1_000, max: 300_000 }).map((n) => `SELECT '${'x'.repeat(n)}'`);
const comments = fc.constantFrom(
  "SELECT 1 /* ) */ FROM events -- '",
  'SELECT 1 --\n; DROP TABLE events',
  "SELECT 1 /* ' */ FROM system.tables",
  'SELECT 1 /*/ FROM events',
  "SELECT '*/' FROM events /* ",
  'SELECT 1 // FROM system.one',
  "SELECT '\\' FROM system.one --'",
  'SELECT `a\\`b` FROM events',
  'SELECT 1 FROM events e JOIN events e ON 1',
  'WITH events AS (SELECT 1 AS x) SELECT x FROM events',
);
const nul = fc.string().map((s) => `SELECT '${s}\u0000' FROM events`);
const expression = hogqlExpression.map((e) => `SELECT ${e} FROM events`);
const hostile = fc.oneof(tokens, nested, subqueries, hugeLiteral, comments, nul, expression, fc.string({ maxLength: 200 }));

describe('HogQL queries from a hostile generator', () => {
  let f: FlagFixture;
  beforeAll(async () => {
    f = await createFlagFixture('hogql-query-fuzz', () => NOW);
    await insertEvents(
      f.ch,
      ['a', 'b'].map((distinctId) => testEventRow({ event: 'visit', atMs: NOW - 1000, distinctId, properties: { $browser: 'Chrome' } })),
    );
  });
  afterAll(() => f.close());

  it('never answer 5xx, and the service keeps answering', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(hostile, fc.record({ p: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) }), async (query, values) => {
        const res = await request(f.app)
          .post('/api/environments/1/query/')
          .set(bearer(ADMIN_KEY))
          .send({ query: { kind: 'HogQLQuery', query, values } });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) throw new Error(`${res.status} for ${JSON.stringify(query.slice(0, 300))}: ${JSON.stringify(res.body).slice(0, 300)}`);
        if (res.status === 400) expect(res.body).toMatchObject({ type: 'validation_error', detail: expect.any(String) });
      }),
      { numRuns: RUNS, seed: Number(process.env['HOGQL_SELECT_FUZZ_SEED'] ?? 29) },
    );
    const health = await request(f.app)
      .post('/api/environments/1/query/')
      .set(bearer(ADMIN_KEY))
      .send({ query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } });
    expect(health.body.results).toEqual([[2]]);
    expect([...statuses.keys()].every((status) => status < 500)).toBe(true);
  }, 120_000);
});
