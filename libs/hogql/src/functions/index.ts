import { AGGREGATE_FUNCTIONS } from './aggregate';
import { CASE_INSENSITIVE_NAMES } from './case-insensitive';
import { CONDITIONAL_FUNCTIONS } from './conditional';
import { CONVERSION_FUNCTIONS } from './conversion';
import { DATE_FUNCTIONS, TIME_ZONE_ARGUMENT as TIME_ZONE_ARGUMENTS } from './date';
import { table, type FunctionSpec } from './function-spec';
import { MATH_FUNCTIONS } from './math';
import { STRING_FUNCTIONS } from './string';

export type { FunctionSpec } from './function-spec';

/** Per-event functions: HogQL name → ClickHouse name and allowed argument counts. */
export const SCALAR_FUNCTIONS = table<FunctionSpec>({
  ...STRING_FUNCTIONS,
  ...DATE_FUNCTIONS,
  ...CONDITIONAL_FUNCTIONS,
  ...MATH_FUNCTIONS,
});

/** Aggregates: HogQL name → ClickHouse name and argument counts. */
export const AGGREGATES = table<FunctionSpec>(AGGREGATE_FUNCTIONS);

/** Conversions that never fail on bad input: HogQL name → ClickHouse name. */
export const CONVERSIONS = table<string>(CONVERSION_FUNCTIONS);

/** Which argument of a function names a time zone. */
export const TIME_ZONE_ARGUMENT = table<number>(TIME_ZONE_ARGUMENTS);

/** Lower-cased name → canonical name, for the functions HogQL reads in any case. */
export const CASE_INSENSITIVE = table<string>(Object.fromEntries(CASE_INSENSITIVE_NAMES.map((name) => [name.toLowerCase(), name])));

/**
 * The canonical name of a function as written: itself, or its any-case twin. Lookup is by the
 * lower-cased name, as PostHog's `_find_function` does after an exact miss.
 */
export const canonicalFunctionName = (written: string): string => CASE_INSENSITIVE.get(written.toLowerCase()) ?? written;
