/**
 * The numbers a filter may compare with: ClickHouse's Int64 range. A value past it (`gt
 * "9223372036854775808"`, `1e300`) is refused by name rather than compared as a rounded float,
 * both when a filter is saved (cohorts, actions, insights, test-account filters) and when a
 * stored one is compiled.
 */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** The largest magnitude a Float64 reading of an in-range integer can have (2^63 after rounding). */
const FLOAT_LIMIT = 2 ** 63;
const INTEGER_TEXT = /^\s*[-+]?\d+\s*$/;

export const NUMBER_RANGE_TEXT = 'between -9223372036854775808 and 9223372036854775807';

/** Whether a filter's numeric value lies in Int64's range (integer texts compared exactly). */
export function withinNumberRange(value: unknown): boolean {
  if (typeof value === 'string' && INTEGER_TEXT.test(value)) {
    const exact = BigInt(value.trim());
    return exact >= INT64_MIN && exact <= INT64_MAX;
  }
  const number = Number(value);
  return Number.isFinite(number) && Math.abs(number) <= FLOAT_LIMIT;
}
