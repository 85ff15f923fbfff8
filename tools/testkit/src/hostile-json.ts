/**
 * Hostile JSON for fuzzing request handlers: values a client can send that ordinary generators
 * never produce. Generated as JSON *text*, because several of them cannot survive a trip through
 * a JavaScript value (`9223372036854775808` loses digits, `1e309` becomes Infinity, which
 * JSON.stringify writes as null) and the handler must see exactly what a client sent.
 */
import fc from 'fast-check';

const nested = (depth: number, open: string, close: string, leaf = '1') => `${open.repeat(depth)}${leaf}${close.repeat(depth)}`;

/** One hostile JSON value, as text. */
export const hostileJsonValue: fc.Arbitrary<string> = fc.oneof(
  // Nesting deeper than any limit, in lists and in objects.
  fc
    .constantFrom(65, 1_000, 10_000)
    .chain((depth) => fc.constantFrom(nested(depth, '[', ']'), nested(depth, '{"a":', '}'), nested(depth, '[{"key":', '}]', '"x"'))),
  // Characters PostgreSQL refuses or mangles.
  fc.constantFrom('"a\\u0000b"', '"\\u0000"', '"\\ud800"', '"x\\udfff"', '"\\udbff\\udbff"', '"%00"', '"\\u202e\\ufeff"'),
  // Numbers past their column or past what a double holds exactly.
  fc.constantFrom(
    '9223372036854775808',
    '-9223372036854775809',
    '18446744073709551616',
    '2147483648',
    '-2147483649',
    '1e20',
    '1e309',
    '-1e309',
    '1e-400',
    '0.1',
    '-0',
    '99999999999999999999999999999999999999',
  ),
  // Dates that are too far, too large or do not exist.
  fc.constantFrom(
    '"-150000000d"',
    '"-99999999999999999999h"',
    '"-999999y"',
    '"2024-02-30"',
    '"2023-02-29T10:00:00Z"',
    '"0000-01-01"',
    '"9999-12-31"',
    '"2024-01-01T25:61:00"',
    '"-1e309d"',
  ),
  // Catastrophic-backtracking patterns and other strings with meaning somewhere.
  fc.constantFrom('"^(a+)+$"', '"(x+x+)+y"', '"(" ', '"[[:alpha:]"', '"\' OR 1=1 --"', '"{{7*7}}"', '"__proto__"', '"constructor"'),
  // Wrong types.
  fc.constantFrom('true', 'false', 'null', '{}', '[]', '0', '-1', '""', '" "', '[null]', '{"__proto__":{"polluted":1}}'),
  // Arbitrary strings and values, JSON-encoded as a client would.
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => JSON.stringify(s)),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);

/** A megabyte-scale string or list: rare in a run, since each one costs a megabyte on the wire. */
export const hugeJsonValue: fc.Arbitrary<string> = fc.constantFrom(
  `"${'k'.repeat(1_000_000)}"`,
  `"${'a'.repeat(5_000)}"`,
  `[${Array.from({ length: 100_000 }, () => '1').join(',')}]`,
);

/** A hostile key for an object: NULs, surrogates, prototype names, long keys. */
export const hostileJsonKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('"a\\u0000"', '"\\ud800"', '"__proto__"', '"constructor"', '""', `"${'k'.repeat(10_000)}"`),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s)),
);

/** Every path (list of keys/indexes) to a value inside `value`, the root included as []. */
export function jsonPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const paths: (string | number)[][] = [prefix];
  if (Array.isArray(value)) value.forEach((item, i) => paths.push(...jsonPaths(item, [...prefix, i])));
  else if (typeof value === 'object' && value !== null) for (const [key, child] of Object.entries(value)) paths.push(...jsonPaths(child, [...prefix, key]));
  return paths;
}

const PLACEHOLDER = '"@@hostile-value@@"';

/**
 * `base` as JSON text with the value at `path` replaced by `hostile` (raw JSON text), or, when
 * `asKey`, with a hostile key holding the old value added beside it.
 */
export function injectJson(base: unknown, path: (string | number)[], hostile: string, asKey = false): string {
  if (path.length === 0 && !asKey) return hostile;
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  const steps = asKey ? path : path.slice(0, -1);
  for (const step of steps) {
    const next = parent[step];
    if (typeof next !== 'object' || next === null) return JSON.stringify(copy);
    parent = next as Record<string | number, unknown>;
  }
  if (asKey) {
    if (Array.isArray(parent)) parent.push({ [JSON.parse(PLACEHOLDER) as string]: 1 });
    else parent[JSON.parse(PLACEHOLDER) as string] = 1;
    return JSON.stringify(copy).replace(`${PLACEHOLDER}:1`, () => `${hostile}:1`);
  }
  parent[path[path.length - 1]!] = JSON.parse(PLACEHOLDER);
  // A replacer function: a string replacement would read `$&` or `$'` inside the hostile text as
  // replacement patterns.
  return JSON.stringify(copy).replace(PLACEHOLDER, () => hostile);
}

/**
 * Bodies derived from a valid `base`: one hostile value or key at one place, or (rarely) a
 * megabyte-scale value, or a hostile value as the whole body.
 */
export function hostileBodies(base: unknown): fc.Arbitrary<string> {
  const paths = jsonPaths(base);
  return fc.oneof(
    { weight: 12, arbitrary: fc.tuple(fc.constantFrom(...paths), hostileJsonValue).map(([path, value]) => injectJson(base, path, value)) },
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...paths), hostileJsonKey).map(([path, key]) => injectJson(base, path, key, true)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...paths), hugeJsonValue).map(([path, value]) => injectJson(base, path, value)) },
    { weight: 1, arbitrary: hostileJsonValue },
  );
}

/** Query-string values: the same hostility, percent-encoded as a client would send it. */
export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('%00', 'a%00b', '%ED%A0%80', '%FF', '9223372036854775808', '1e20', '-1', '1e309', '2147483648', '%', '%%', 'true', ''),
  fc.constantFrom(65, 10_000).map((depth) => encodeURIComponent(nested(depth, '[', ']'))),
  fc.constantFrom('x'.repeat(5_000), encodeURIComponent('"\\ud800"')),
  fc.string({ unit: 'binary', maxLength: 30 }).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
);
