/**
 * ClickHouse errors a client's own input can cause by itself (a HogQL expression given the
 * wrong type, a text that does not parse, an argument out of range), each with a fixed
 * explanation: ClickHouse's own text is not passed on, as it can quote stored values. The set
 * follows the errors PostHog shows its users as their query's fault (posthog/errors.py,
 * CLICKHOUSE_ERROR_CODE_LOOKUP entries marked user_safe), less those this server's SQL cannot
 * reach from a client's text (joins, tables, unions). Keyed by ClickHouse's error code: the
 * client's `type` is read out of the message text and can be a word of it instead.
 */
const EXPLANATIONS: ReadonlyMap<number, readonly [name: string, explanation: string]> = new Map([
  [43, ['ILLEGAL_TYPE_OF_ARGUMENT', 'a function is given an argument of a type it does not take']],
  [386, ['NO_COMMON_TYPE', 'values of types that cannot be compared or combined are mixed']],
  [53, ['TYPE_MISMATCH', 'a value does not have the type its place needs']],
  [70, ['CANNOT_CONVERT_TYPE', 'a value cannot be converted to the type needed']],
  [44, ['ILLEGAL_COLUMN', 'an argument that must be a constant is not, or has a type the function does not take']],
  [59, ['ILLEGAL_TYPE_OF_COLUMN_FOR_FILTER', 'a filter is not a true/false condition']],
  [42, ['NUMBER_OF_ARGUMENTS_DOESNT_MATCH', 'a function is given the wrong number of arguments']],
  [34, ['TOO_MANY_ARGUMENTS_FOR_FUNCTION', 'a function is given too many arguments']],
  [35, ['TOO_FEW_ARGUMENTS_FOR_FUNCTION', 'a function is given too few arguments']],
  [36, ['BAD_ARGUMENTS', 'an argument is not one its function accepts (an unknown time zone or unit, say)']],
  [69, ['ARGUMENT_OUT_OF_BOUND', 'an argument is outside the range its function accepts']],
  [321, ['VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE', 'a value is outside the range of its type']],
  [407, ['DECIMAL_OVERFLOW', 'a number overflows its type']],
  [153, ['ILLEGAL_DIVISION', 'a division has no result (by zero, or the smallest integer by -1)']],
  [6, ['CANNOT_PARSE_TEXT', 'a text cannot be read as the type asked for']],
  [72, ['CANNOT_PARSE_NUMBER', 'a text cannot be read as a number']],
  [27, ['CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'a text cannot be read as the type asked for']],
  [32, ['ATTEMPT_TO_READ_AFTER_EOF', 'a text ends before a value of the type asked for is read']],
  [130, ['CANNOT_READ_ARRAY_FROM_TEXT', 'a text cannot be read as an array']],
  [38, ['CANNOT_PARSE_DATE', 'a text cannot be read as a date']],
  [41, ['CANNOT_PARSE_DATETIME', 'a text cannot be read as a date and time']],
  [376, ['CANNOT_PARSE_UUID', 'a text cannot be read as a UUID']],
  [467, ['CANNOT_PARSE_BOOL', 'a text cannot be read as true or false']],
  [427, ['CANNOT_COMPILE_REGEXP', 'a regular expression cannot be compiled']],
  [135, ['ZERO_ARRAY_OR_TUPLE_INDEX', 'arrays and tuples are indexed from 1, not 0']],
  [190, ['SIZES_OF_ARRAYS_DONT_MATCH', 'arrays used together have different lengths']],
  [128, ['TOO_LARGE_ARRAY_SIZE', 'an array grows past the size ClickHouse allows']],
  [131, ['TOO_LARGE_STRING_SIZE', 'a text grows past the size ClickHouse allows']],
  [215, ['NOT_AN_AGGREGATE', 'per-event values are used beside aggregates without being aggregated']],
  [184, ['ILLEGAL_AGGREGATION', 'an aggregate is used where it cannot be']],
  [47, ['UNKNOWN_IDENTIFIER', 'a name does not resolve to a column']],
  [48, ['NOT_IMPLEMENTED', 'an operation is not supported for the types given (a UUID converted to a number, say)']],
]);

/** The name and explanation of a ClickHouse error the client's input caused, or null for any other failure. */
export function clickHouseInputError(error: unknown): { type: string; explanation: string } | null {
  const known = EXPLANATIONS.get(Number((error as { code?: unknown } | null)?.code));
  return known === undefined ? null : { type: known[0], explanation: known[1] };
}

/** Every error code above, with its name: a test checks them against ClickHouse's errorCodeToName. */
export const CLICKHOUSE_INPUT_ERROR_CODES: ReadonlyMap<number, string> = new Map([...EXPLANATIONS].map(([code, [name]]) => [code, name]));

const BAD_ARGUMENTS = 36;

/** ClickHouse's refusal of a time zone by name (`Cannot load time zone X`), with the zone. */
export function unknownTimeZoneOf(error: unknown): string | null {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (Number(code) !== BAD_ARGUMENTS || typeof message !== 'string') return null;
  return /Cannot load time zone (\S+?):/.exec(message)?.[1] ?? null;
}
