import { fn, type HogQLFunction } from './function-spec';

/**
 * Conditional, logical, comparison and null-handling functions (posthog/hogql/functions/mapping.py
 * and clickhouse/conversions.py NULLABILITY_FUNCTIONS). `CASE WHEN` reaches the printer as
 * `if`/`multiIf`; `CASE x WHEN` as `_caseWithExpression` (see the printer).
 */
export const CONDITIONAL_FUNCTIONS: Record<string, HogQLFunction> = {
  if: fn('if', 3, 3, { caseInsensitive: true }),
  multiIf: fn('multiIf', 3, null),
  transform: fn('transform', 3, 4),
  equals: fn('equals', 2, 2),
  notEquals: fn('notEquals', 2, 2),
  less: fn('less', 2, 2),
  greater: fn('greater', 2, 2),
  lessOrEquals: fn('lessOrEquals', 2, 2),
  greaterOrEquals: fn('greaterOrEquals', 2, 2),
  and: fn('and', 2, null),
  or: fn('or', 2, null),
  xor: fn('xor', 2, null),
  not: fn('not', 1, 1, { caseInsensitive: true }),
  isNull: fn('isNull', 1, 1, { caseInsensitive: true }),
  isNotNull: fn('isNotNull', 1, 1),
  coalesce: fn('coalesce', 1, null, { caseInsensitive: true }),
  ifNull: fn('ifNull', 2, 2, { caseInsensitive: true }),
  nullIf: fn('nullIf', 2, 2, { caseInsensitive: true }),
  assumeNotNull: fn('assumeNotNull', 1, 1),
  toNullable: fn('toNullable', 1, 1),
};
