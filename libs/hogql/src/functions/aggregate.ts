import type { FunctionSpec } from './function-spec';

/** Aggregates (only where the caller allows them): HogQL name → ClickHouse name and argument counts. */
export const AGGREGATE_FUNCTIONS: Record<string, FunctionSpec> = {
  count: { sql: 'count', min: 0, max: 1 },
  countIf: { sql: 'countIf', min: 1, max: 2 },
  sum: { sql: 'sum', min: 1, max: 1 },
  sumIf: { sql: 'sumIf', min: 2, max: 2 },
  avg: { sql: 'avg', min: 1, max: 1 },
  avgIf: { sql: 'avgIf', min: 2, max: 2 },
  min: { sql: 'min', min: 1, max: 1 },
  max: { sql: 'max', min: 1, max: 1 },
  uniq: { sql: 'uniq', min: 1, max: 5 },
  uniqExact: { sql: 'uniqExact', min: 1, max: 5 },
  median: { sql: 'median', min: 1, max: 1 },
  quantile: { sql: 'quantile', min: 1, max: 1 },
  any: { sql: 'any', min: 1, max: 1 },
};
