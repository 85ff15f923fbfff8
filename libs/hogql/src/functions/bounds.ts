import { CLICKHOUSE_TIME_ZONES } from '@sightline/clickhouse';
import { re2Problem } from '@sightline/properties';
import { HogQLError, type HogQLNode } from '../hogql-error';
import type { HogQLFunction } from './function-spec';

/**
 * The aggregates `arrayReduce` may name (HOGQL_PERMITTED_PARAMETRIC_FUNCTIONS in
 * posthog/hogql/functions/config.py, without the `*State`/`*Map` forms left out here).
 */
const PERMITTED_PARAMETRIC_AGGREGATES = new Set(['count', 'sum', 'min', 'max', 'avg', 'median', 'uniq']);

const constantValue = (node: HogQLNode | undefined): unknown => (node?.node === 'Constant' ? node['value'] : undefined);

/** A constant integer as a number (the parser keeps big ones as text objects: those are out of any bound). */
const constantInteger = (node: HogQLNode | undefined): number | null => {
  const value = constantValue(node);
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
};

/**
 * The data type families a JSONExtract may name (ClickHouse's): a type is these names, numbers,
 * quoted names (Tuple's and Enum's), parentheses, commas and spaces, so ClickHouse parses it
 * rather than refusing the whole query on a name it does not know.
 */
const TYPE_FAMILIES = new Set([
  ...['UInt8', 'UInt16', 'UInt32', 'UInt64', 'UInt128', 'UInt256', 'Int8', 'Int16', 'Int32', 'Int64', 'Int128', 'Int256'],
  ...['Float32', 'Float64', 'Decimal', 'Decimal32', 'Decimal64', 'Decimal128', 'Decimal256', 'Bool', 'String', 'FixedString'],
  ...['UUID', 'Date', 'Date32', 'DateTime', 'DateTime64', 'IPv4', 'IPv6', 'Enum8', 'Enum16', 'Nullable', 'LowCardinality'],
  ...['Array', 'Tuple', 'Map', 'Nothing'],
]);
const TYPE_TEXT = /^[A-Za-z0-9_(), ']+$/;

function checkTypeName(name: string, type: unknown): void {
  const words = typeof type === 'string' && TYPE_TEXT.test(type) ? type.replace(/'[^']*'/g, '').match(/[A-Za-z_][A-Za-z0-9_]*/g) : null;
  if (!words || words.some((word) => !TYPE_FAMILIES.has(word))) {
    throw new HogQLError(`${name} needs a ClickHouse data type as a constant last argument, as in ${name}(json, 'key', 'Array(String)').`);
  }
}

/** Checks what a call's constants must be before it reaches ClickHouse: time zone, pattern, bound, levels. */
export function checkConstants(name: string, spec: HogQLFunction, args: HogQLNode[], params: HogQLNode[]): void {
  if (spec.timeZoneArgument !== undefined) {
    const zone = constantValue(args[spec.timeZoneArgument]);
    if (typeof zone === 'string' && !CLICKHOUSE_TIME_ZONES.has(zone)) throw new HogQLError(`Unknown time zone "${zone.slice(0, 60)}" in ${name}().`);
  }
  if (spec.regexArgument !== undefined) {
    const pattern = constantValue(args[spec.regexArgument]);
    if (typeof pattern !== 'string' || re2Problem(pattern) !== null) {
      throw new HogQLError(`${name} needs a valid regular expression constant (RE2 syntax).`);
    }
  }
  for (const index of spec.constantStrings ?? []) {
    if (typeof constantValue(args[index]) !== 'string') throw new HogQLError(`Function '${name}' takes a constant string as argument ${index + 1}.`);
  }
  if (spec.minParams !== undefined && name.startsWith('quantile')) {
    for (const level of params) {
      const value = constantValue(level);
      if (typeof value !== 'number' || value < 0 || value > 1) throw new HogQLError(`${name} needs levels between 0 and 1, as in ${name}(0.9)(x).`);
    }
  }
  const bound = spec.bound;
  if (!bound) return;
  switch (bound.kind) {
    case 'size-argument': {
      const size = constantInteger(args[bound.argument]);
      const min = bound.min ?? 0;
      if (size === null || size < min || size > bound.max) {
        throw new HogQLError(`Function '${name}' takes its size as a constant integer from ${min} to ${bound.max}.`);
      }
      return;
    }
    case 'range': {
      const values = args.map(constantInteger);
      if (values.some((value) => value === null)) throw new HogQLError(`Function '${name}' takes constant integers.`);
      const [start, end, step] = values.length === 1 ? [0, values[0]!, 1] : [values[0]!, values[1]!, values[2] ?? 1];
      const count = step > 0 ? Math.ceil((end - start) / step) : Infinity;
      if (count > bound.max) throw new HogQLError(`Function '${name}' builds at most ${bound.max} elements.`);
      return;
    }
    case 'max-size-parameter': {
      const size = params[bound.argument];
      if (size === undefined) return;
      const value = constantInteger(size);
      if (value === null || value < 1 || value > bound.max) {
        throw new HogQLError(`Aggregation '${name}' keeps at most ${bound.max} elements: its first parameter must be an integer from 1 to ${bound.max}.`);
      }
      return;
    }
    case 'type-name':
      return checkTypeName(name, constantValue(args[args.length - 1]));
    case 'aggregate-name': {
      const aggregate = constantValue(args[bound.argument]);
      if (typeof aggregate !== 'string' || !PERMITTED_PARAMETRIC_AGGREGATES.has(aggregate)) {
        throw new HogQLError(`Function '${name}' takes the name of one of these aggregates first: ${[...PERMITTED_PARAMETRIC_AGGREGATES].join(', ')}.`);
      }
      return;
    }
  }
}
