import leven from 'leven';
import { HogQLError, type HogQLNode } from '../hogql-error';
import { AGGREGATE_FUNCTIONS } from './aggregate';
import { ARRAY_FUNCTIONS } from './array';
import { checkConstants } from './bounds';
import { CONDITIONAL_FUNCTIONS } from './conditional';
import { CONVERSION_FUNCTIONS } from './conversion';
import { DATE_FUNCTIONS } from './date';
import { table, type HogQLFunction } from './function-spec';
import { JSON_FUNCTIONS } from './json';
import { MATH_FUNCTIONS } from './math';
import { STRING_FUNCTIONS } from './string';
import { URL_FUNCTIONS } from './url';

export type { FunctionBound, HogQLFunction } from './function-spec';
export { MAX_VARIADIC_ARGUMENTS } from './function-spec';
export { MAX_COLLECTED_ELEMENTS } from './aggregate';
export { MAX_BUILT_ARRAY_ELEMENTS } from './array';

/** Per-row functions (HOGQL_CLICKHOUSE_FUNCTIONS of posthog/hogql/functions/mapping.py). */
export const HOGQL_FUNCTIONS = table<HogQLFunction>({
  ...MATH_FUNCTIONS,
  ...ARRAY_FUNCTIONS,
  ...CONVERSION_FUNCTIONS,
  ...DATE_FUNCTIONS,
  ...JSON_FUNCTIONS,
  ...URL_FUNCTIONS,
  ...STRING_FUNCTIONS,
  ...CONDITIONAL_FUNCTIONS,
});

/** Aggregates (HOGQL_AGGREGATIONS of posthog/hogql/functions/aggregations.py). */
export const HOGQL_AGGREGATIONS = table<HogQLFunction>(AGGREGATE_FUNCTIONS);

/** A function found by the name a query wrote: its canonical name and what it is. */
export interface FoundFunction {
  name: string;
  spec: HogQLFunction;
}

/** Lower-cased name → canonical name of every function also found in any letter case. */
const anyCase = (functions: ReadonlyMap<string, HogQLFunction>) =>
  new Map([...functions].filter(([, spec]) => spec.caseInsensitive).map(([name]) => [name.toLowerCase(), name]));
const AGGREGATIONS_ANY_CASE = anyCase(HOGQL_AGGREGATIONS);
const FUNCTIONS_ANY_CASE = anyCase(HOGQL_FUNCTIONS);

/** As PostHog's `_find_function`: the name as written, else its any-case twin when it has one. */
function find(written: string, functions: ReadonlyMap<string, HogQLFunction>, anyCaseNames: Map<string, string>): FoundFunction | undefined {
  const name = functions.has(written) ? written : anyCaseNames.get(written.toLowerCase());
  const spec = name === undefined ? undefined : functions.get(name);
  return spec && name !== undefined ? { name, spec } : undefined;
}

export const findHogQLAggregation = (written: string) => find(written, HOGQL_AGGREGATIONS, AGGREGATIONS_ANY_CASE);
export const findHogQLFunction = (written: string) => find(written, HOGQL_FUNCTIONS, FUNCTIONS_ANY_CASE);
/** An aggregate first, then a per-row function, as PostHog's printer looks them up. */
export const findFunction = (written: string): FoundFunction | undefined => findHogQLAggregation(written) ?? findHogQLFunction(written);

const ALL_NAMES = [...HOGQL_AGGREGATIONS.keys(), ...HOGQL_FUNCTIONS.keys()];

/**
 * The closest known name, when one is close: the same name in another letter case, else the most
 * similar by edit distance, scored like Python's difflib ratio (2 × matches / both lengths) with
 * PostHog's bar, so `tostring` suggests `toString`, `noway` suggests `now` and `mad` nothing.
 */
function closestName(written: string): string | undefined {
  const lower = written.toLowerCase();
  const sameLetters = ALL_NAMES.find((name) => name.toLowerCase() === lower);
  if (sameLetters) return sameLetters;
  let best: string | undefined;
  let bestScore = 0.7;
  for (const name of ALL_NAMES) {
    const score = (2 * (Math.max(name.length, written.length) - leven(name, written))) / (name.length + written.length);
    if (score > bestScore) [best, bestScore] = [name, score];
  }
  return best;
}

/** PostHog's refusal of a name it does not map, naming it (and what it may have meant). */
export function unsupportedFunction(written: string): HogQLError {
  const name = written.slice(0, 60);
  const closest = closestName(name);
  return new HogQLError(`Unsupported function call '${name}(...)'${closest ? `. Perhaps you meant '${closest}(...)'?` : ''}`);
}

/** PostHog's validate_function_args (posthog/hogql/functions/core.py), word for word. */
export function checkCount(count: number, min: number, max: number, name: string, term: 'function' | 'aggregation', argument = 'argument'): void {
  const Term = term === 'function' ? 'Function' : 'Aggregation';
  const plural = (n: number) => `${argument}${n === 1 ? '' : 's'}`;
  if (min === max && (count < min || count > max)) throw new HogQLError(`${Term} '${name}' expects ${min} ${plural(min)}, found ${count}`);
  if (count < min) throw new HogQLError(`${Term} '${name}' expects at least ${min} ${plural(min)}, found ${count}`);
  if (count > max) throw new HogQLError(`${Term} '${name}' expects at most ${max} ${plural(max)}, found ${count}`);
}

/**
 * Checks a call before it is printed: its argument and parameter counts (PostHog's messages,
 * with the name as written), then the constants it needs (time zone, pattern, bound).
 */
export function checkCall(written: string, found: FoundFunction, args: HogQLNode[], params: HogQLNode[] | null): void {
  const { spec } = found;
  const term = spec.aggregate ? 'aggregation' : 'function';
  checkCount(args.length, spec.minArgs, spec.maxArgs, written, term);
  const minParams = spec.minParams ?? 0;
  const maxParams = spec.maxParams ?? 0;
  if (minParams > 0 && params === null) {
    throw new HogQLError(`${term === 'function' ? 'Function' : 'Aggregation'} '${written}' requires parameters in addition to arguments`);
  }
  if (params !== null) checkCount(params.length, minParams, maxParams, written, term, 'parameter');
  checkConstants(found.name, spec, args, params ?? []);
}
