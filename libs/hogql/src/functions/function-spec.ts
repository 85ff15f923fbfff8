/**
 * A HogQL function as posthog/hogql/functions/core.py describes one (HogQLFunctionMeta): the
 * ClickHouse function it prints as, how many arguments and parameters it takes, and what must be
 * checked before it reaches ClickHouse.
 */
export interface HogQLFunction {
  /** The ClickHouse function printed for it. */
  clickhouse: string;
  minArgs: number;
  /** PostHog's `None` (any number) is MAX_VARIADIC_ARGUMENTS here. */
  maxArgs: number;
  /** Parameters, as in `quantile(0.9)(x)`: none unless given. */
  minParams?: number;
  maxParams?: number;
  /** An aggregate: only where the caller allows aggregation, never inside another. */
  aggregate?: boolean;
  /** Also found written in any letter case (PostHog's `case_sensitive=False`). */
  caseInsensitive?: boolean;
  /** The argument naming a time zone: a constant one must be a zone ClickHouse knows. */
  timeZoneArgument?: number;
  /** The argument holding a regular expression: a constant valid in RE2, ClickHouse's engine. */
  regexArgument?: number;
  /** Arguments that may be lambdas (`x -> x * 2`): the higher-order array functions. */
  lambdas?: boolean;
  /** Read its first argument as a number when it is a property (properties are text). */
  numericFirstArgument?: boolean;
  /** Its arguments are read as text first (HogQL's toInt/toFloat of any value answer null on bad input). */
  textArguments?: boolean;
  /** A bound on what it may build or read (see bounds.ts). */
  bound?: FunctionBound;
  /** Arguments that must be constant strings (a format pattern). */
  constantStrings?: number[];
}

/**
 * What keeps a function from building without end, or from failing on what it cannot read
 * (checked in bounds.ts):
 * - `size-argument`: argument `argument` is a constant integer from `min` to `max`;
 * - `range`: every argument is a constant integer and the range holds at most `max` elements;
 * - `max-size-parameter`: the first parameter (the most elements kept) is a constant up to `max`,
 *   and `max` when not given;
 * - `aggregate-name`: argument `argument` is a constant naming an aggregate PostHog permits there
 *   (HOGQL_PERMITTED_PARAMETRIC_FUNCTIONS in posthog/hogql/functions/config.py);
 * - `type-name`: the last argument is a constant naming a ClickHouse data type (JSONExtract's).
 */
export interface FunctionBound {
  kind: 'size-argument' | 'range' | 'max-size-parameter' | 'aggregate-name' | 'type-name';
  argument: number;
  max: number;
  min?: number;
}

/** How many arguments a variadic function takes at most: PostHog sets no bound; a query is bounded in length anyway. */
export const MAX_VARIADIC_ARGUMENTS = 100;

export const fn = (clickhouse: string, minArgs: number, maxArgs: number | null, extra: Partial<HogQLFunction> = {}): HogQLFunction => ({
  clickhouse,
  minArgs,
  maxArgs: maxArgs ?? MAX_VARIADIC_ARGUMENTS,
  ...extra,
});

/**
 * A table of names looked up with the client's text: a Map, so a name that exists on every
 * JavaScript object (`constructor`, `toString`, `__proto__`, `hasOwnProperty`) is not found in it.
 */
export const table = <T>(entries: Record<string, T>): ReadonlyMap<string, T> => new Map(Object.entries(entries));
