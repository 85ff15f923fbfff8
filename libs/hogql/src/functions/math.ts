import type { FunctionSpec } from './function-spec';

/** Mathematical functions: HogQL name → ClickHouse name and allowed argument counts. */
export const MATH_FUNCTIONS: Record<string, FunctionSpec> = {
  round: { sql: 'round', min: 1, max: 2 },
  floor: { sql: 'floor', min: 1, max: 2 },
  ceil: { sql: 'ceil', min: 1, max: 2 },
  abs: { sql: 'abs', min: 1, max: 1 },
  greatest: { sql: 'greatest', min: 2, max: 20 },
  least: { sql: 'least', min: 2, max: 20 },
};
