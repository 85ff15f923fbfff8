/**
 * HogQL expressions for fuzzing the places a client's expression reaches ClickHouse (math_hogql,
 * hogql breakdowns, hogql filters): shaped by HogQL's grammar so most get past the parser, with
 * the values that break printers and engines at every leaf (integers at and past Int64's ends,
 * huge offsets, unknown time zones, empty arrays), the allow-listed functions beside names every
 * JavaScript object has (`constructor`, `__proto__`) and names nothing has, and text near the
 * grammar (a generated expression cut, or with a character put in).
 */
import { HOGQL_AGGREGATIONS, HOGQL_FUNCTIONS } from '@sightline/hogql';
import fc from 'fast-check';

/** Fields HogQL resolves, and some it must refuse. */
const FIELDS = [
  'event',
  'timestamp',
  'distinct_id',
  'person_id',
  'elements_chain',
  'person.id',
  'properties.x',
  'properties.$browser',
  "properties['a key']",
  'properties.x.y',
  'person.properties.email',
  'person.properties.x',
  '$group_0',
  'group_0.properties.name',
  'group_9.properties.name',
  'person',
  'properties',
  'unknown_field',
  'system.tables.name',
  'constructor',
  '__proto__',
  // A lambda's name (`x -> …`), and a field outside one.
  'x',
];

/** Numbers at the edges of Int64, UInt64, Float64 and JavaScript's safe integers. */
const NUMBERS = [
  '0',
  '1',
  '-1',
  '2',
  '7',
  '2147483648',
  '9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '-9223372036854775807',
  '18446744073709551615',
  '18446744073709551616',
  '99999999999999999999999999',
  '0.1',
  '-0.0',
  '1e308',
  '1e400',
  '-1e400',
  '1.5e-320',
];

/** Strings with a meaning to some function: zones, dates, units, patterns, escapes. */
const STRINGS = [
  '',
  'x',
  '%',
  '_',
  'UTC',
  'Europe/Berlin',
  'Invalid/Zone',
  'US/Pacific-New',
  'SystemV/AST4',
  'Canada/East-Saskatchewan',
  '2024-01-01',
  '2024-02-30',
  'not a date',
  'day',
  'bogus',
  '(',
  '[[:alpha:]',
  '(a+)+$',
  '\\',
  "'",
  '\u0000',
  '\ud800',
  'signup',
];

/** Every function the printer allows, and its aggregates (libs/hogql/src/functions). */
const FUNCTIONS = [...HOGQL_FUNCTIONS.keys(), ...HOGQL_AGGREGATIONS.keys()];

/** The functions that take a lambda, for `f(x -> …, …)`. */
const LAMBDA_FUNCTIONS = [...HOGQL_FUNCTIONS].filter(([, spec]) => spec.lambdas).map(([name]) => name);

/** Names on every JavaScript object, and names nothing defines. */
const FOREIGN_FUNCTIONS = [
  'constructor',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  '__proto__',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  'sleep',
  'file',
  'url',
  'remote',
  's3',
  'numbers',
  'generateSeries',
  'dictGet',
  'getSetting',
  'space',
  'timeSlots',
  'noSuchFunction',
];

const OPERATORS = ['+', '-', '*', '/', '%', '=', '==', '!=', '<', '<=', '>', '>=', 'like', 'ilike', 'not like', 'in', 'not in', '=~', '!~', 'and', 'or'];

/** A HogQL string literal: backslashes and quotes escaped. */
const quoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const constant: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 4, arbitrary: fc.constantFrom(...STRINGS).map(quoted) },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '[1, 2]', "('a', 1)", "['a', 'b']") },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? '-0.0' : String(n))) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(quoted) },
);

const leaf: fc.Arbitrary<string> = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FIELDS) }, { weight: 2, arbitrary: constant });

/** Grammar-shaped expressions, a few levels deep. */
const shaped: fc.Arbitrary<string> = fc.letrec<{ expression: string }>((tie) => ({
  expression: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: leaf },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...FUNCTIONS) }, { weight: 1, arbitrary: fc.constantFrom(...FOREIGN_FUNCTIONS) }),
          fc.array(tie('expression'), { maxLength: 4 }),
        )
        .map(([name, args]) => `${name}(${args.join(', ')})`),
    },
    { weight: 3, arbitrary: fc.tuple(tie('expression'), fc.constantFrom(...OPERATORS), tie('expression')).map(([a, op, b]) => `${a} ${op} ${b}`) },
    { weight: 1, arbitrary: tie('expression').map((e) => `not ${e}`) },
    { weight: 1, arbitrary: tie('expression').map((e) => `-${e}`) },
    { weight: 1, arbitrary: tie('expression').map((e) => `(${e})`) },
    { weight: 1, arbitrary: fc.tuple(tie('expression'), tie('expression')).map(([a, i]) => `${a}[${i}]`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('0.5', '0.9', '2', '-1', "'x'"), tie('expression')).map(([p, x]) => `quantile(${p})(${x})`) },
    { weight: 1, arbitrary: tie('expression').map((e) => `count(distinct ${e})`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...LAMBDA_FUNCTIONS), tie('expression'), tie('expression'))
        .map(([name, body, array]) => `${name}(x -> ${body}, ${array})`),
    },
  ),
})).expression;

/** An expression near the grammar: cut short, or with one character put in. */
const mangled: fc.Arbitrary<string> = fc
  .tuple(shaped, fc.nat(), fc.constantFrom('(', ')', "'", '[', ',', '.', ' ', '{', '}', '"', '`', '\\', '\u0000', 'é'), fc.boolean())
  .map(([text, at, char, cut]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    return cut ? text.slice(0, i) : `${text.slice(0, i)}${char}${text.slice(i)}`;
  });

/** One HogQL expression as a client could send it. */
export const hogqlExpression: fc.Arbitrary<string> = fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: mangled });
