/**
 * HogQL queries for fuzzing the query API's HogQLQuery: random tokens of SQL and HogQL (the
 * tables and table functions that must be refused beside those that resolve), brackets and
 * subqueries nested past the bounds, literals of up to 300,000 characters, NUL characters,
 * comment tricks, and grammar-shaped expressions (hogql-expressions.ts) in a SELECT.
 */
import fc from 'fast-check';
import { hogqlExpression } from './hogql-expressions';

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
/** A hostile HogQL query: any of the shapes above. */
export const hostileHogQLQuery: fc.Arbitrary<string> = fc.oneof(
  tokens,
  nested,
  subqueries,
  hugeLiteral,
  comments,
  nul,
  expression,
  fc.string({ maxLength: 200 }),
);
