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
      if (size === null || Math.abs(size) > bound.max) {
        throw new HogQLError(`Function '${name}' takes its size as a constant integer of at most ${bound.max}.`);
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
    case 'aggregate-name': {
      const aggregate = constantValue(args[bound.argument]);
      if (typeof aggregate !== 'string' || !PERMITTED_PARAMETRIC_AGGREGATES.has(aggregate)) {
        throw new HogQLError(`Function '${name}' takes the name of one of these aggregates first: ${[...PERMITTED_PARAMETRIC_AGGREGATES].join(', ')}.`);
      }
      return;
    }
  }
}
