/** Conversions that never fail on bad input (HogQL's toInt/toFloat answer null): HogQL name → ClickHouse name. */
export const CONVERSION_FUNCTIONS: Record<string, string> = {
  toInt: 'toInt64OrNull',
  toFloat: 'toFloat64OrNull',
};
