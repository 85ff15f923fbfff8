import type { FunctionSpec } from './function-spec';

/** String functions: HogQL name → ClickHouse name and allowed argument counts. */
export const STRING_FUNCTIONS: Record<string, FunctionSpec> = {
  lower: { sql: 'lower', min: 1, max: 1 },
  upper: { sql: 'upper', min: 1, max: 1 },
  length: { sql: 'length', min: 1, max: 1 },
  concat: { sql: 'concat', min: 1, max: 20 },
  substring: { sql: 'substring', min: 2, max: 3 },
  trim: { sql: 'trimBoth', min: 1, max: 1 },
  replaceAll: { sql: 'replaceAll', min: 3, max: 3 },
  replaceOne: { sql: 'replaceOne', min: 3, max: 3 },
  position: { sql: 'position', min: 2, max: 2 },
  startsWith: { sql: 'startsWith', min: 2, max: 2 },
  endsWith: { sql: 'endsWith', min: 2, max: 2 },
  toString: { sql: 'toString', min: 1, max: 1 },
  empty: { sql: 'empty', min: 1, max: 1 },
  notEmpty: { sql: 'notEmpty', min: 1, max: 1 },
  extract: { sql: 'extract', min: 2, max: 2 },
  match: { sql: 'match', min: 2, max: 2 },
};
