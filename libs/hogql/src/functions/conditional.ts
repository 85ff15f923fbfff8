import type { FunctionSpec } from './function-spec';

/** Conditional and null-handling functions: HogQL name → ClickHouse name and argument counts. */
export const CONDITIONAL_FUNCTIONS: Record<string, FunctionSpec> = {
  if: { sql: 'if', min: 3, max: 3 },
  multiIf: { sql: 'multiIf', min: 3, max: 41 },
  coalesce: { sql: 'coalesce', min: 1, max: 20 },
  ifNull: { sql: 'ifNull', min: 2, max: 2 },
  nullIf: { sql: 'nullIf', min: 2, max: 2 },
  isNull: { sql: 'isNull', min: 1, max: 1 },
  isNotNull: { sql: 'isNotNull', min: 1, max: 1 },
};
