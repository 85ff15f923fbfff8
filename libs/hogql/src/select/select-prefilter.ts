import type { HogQLNode } from '../hogql-compiler';

type Node = HogQLNode;

/**
 * Which conditions of a SELECT's WHERE a table's own subquery may apply too, before its FINAL
 * merge (docs/behaviours.md, HogQL queries). Rows that FINAL collapses share the table's whole sort
 * key, so a condition over sort-key columns and constants keeps or drops all of them alike: the
 * answer is the same, and the primary key then prunes what FINAL merges. ClickHouse already uses
 * an outer condition on the stored `timestamp` for the key, but not one read through a non-UTC
 * project's `toTimeZone`: there the UTC-day copy is what keeps a one-month query to its month.
 */

/** The top-level AND-ed conditions of a WHERE. */
export function conjuncts(where: Node): Node[] {
  return where.node === 'And' ? (where['exprs'] as Node[]).flatMap(conjuncts) : [where];
}

/** Functions of constants that give the same value for every row (none random, none reading a row). */
const CONSTANT_FUNCTIONS = new Set([
  'toDateTime',
  'toDateTime64',
  'toDate',
  'now',
  'now64',
  'today',
  'yesterday',
  'toString',
  'toStartOfDay',
  'toStartOfWeek',
  'toStartOfMonth',
  'toIntervalSecond',
  'toIntervalMinute',
  'toIntervalHour',
  'toIntervalDay',
  'toIntervalWeek',
  'toIntervalMonth',
  'toIntervalYear',
]);

/** A value the same for every row: a constant, a placeholder, a list of them, or a function of them from the list above. */
export function isConstant(node: Node): boolean {
  switch (node.node) {
    case 'Constant':
    case 'Placeholder':
      return true;
    case 'Tuple':
    case 'Array':
      return (node['exprs'] as Node[]).every(isConstant);
    case 'ArithmeticOperation':
      return isConstant(node['left'] as Node) && isConstant(node['right'] as Node);
    case 'Call':
      return (
        CONSTANT_FUNCTIONS.has(String(node['name'])) &&
        !node['params'] &&
        node['distinct'] !== true &&
        ((node['args'] as Node[] | null) ?? []).every(isConstant)
      );
    default:
      return false;
  }
}

/** An instant (a date-time, not a date nor a text, whose reading would depend on a time zone): its UTC day is exact. */
export function isInstant(node: Node): boolean {
  if (!isConstant(node)) return false;
  if (node.node === 'Call') return ['toDateTime', 'toDateTime64', 'now', 'now64'].includes(String(node['name']));
  if (node.node === 'ArithmeticOperation') return ['+', '-'].includes(String(node['op'])) && isInstant(node['left'] as Node);
  return false;
}

/** Comparisons of a sort-key field with constants that a subquery may repeat as they are. */
export const EXACT_OPERATORS = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', 'not in']);

/**
 * A date-time compared with an instant, as a comparison of its UTC day (`field op instant` read
 * with the field on the left): every row the comparison keeps has a day the widened one keeps.
 */
export const DAY_OPERATORS = new Map([
  ['==', '='],
  ['<', '<='],
  ['<=', '<='],
  ['>', '>='],
  ['>=', '>='],
]);

/** The same comparison with its sides swapped (`X < field` is `field > X`). */
export const FLIPPED = new Map([
  ['==', '=='],
  ['<', '>'],
  ['<=', '>='],
  ['>', '<'],
  ['>=', '<='],
]);

/** Join types whose left or right table may be filled with defaults for unmatched rows. */
export const hasNullableSide = (joinType: string): boolean => /\b(RIGHT|FULL)\b/.test(joinType);
