import { HogQLError, type HogQLNode } from '../hogql-compiler';
import type { TableSpec } from './select-tables';

/** A table reference of a query: a known table (its used fields collected while printing) or a subquery's columns. */
export type TableRef =
  | { kind: 'table'; name: string; sqlAlias: string; table: TableSpec; used: Set<string> }
  | { kind: 'subquery'; name: string | null; sqlAlias: string; columns: readonly string[]; sql: string };

/** A query's `WITH name AS (SELECT …)`: compiled once, inlined where named. */
export interface CteTable {
  sql: string;
  columns: readonly string[];
}

/**
 * The names one SELECT sees: its tables by alias, its CTEs (and those of the queries around it),
 * and its column aliases.
 */
export class Scope {
  readonly tables: TableRef[] = [];
  readonly tablesByName = new Map<string, TableRef>();
  readonly ctes = new Map<string, CteTable>();
  readonly aliases = new Set<string>();

  constructor(readonly parent: Scope | null) {}

  cte(name: string): CteTable | undefined {
    return this.ctes.get(name) ?? this.parent?.cte(name);
  }

  addTable(ref: TableRef, node: HogQLNode): void {
    if (ref.name !== null) {
      if (this.tablesByName.has(ref.name)) throw new HogQLError(`Table alias '${ref.name.slice(0, 60)}' is used twice${at(node)}`, offsetOf(node));
      this.tablesByName.set(ref.name, ref);
    }
    this.tables.push(ref);
  }
}

/** The character offset of a node in the query text, when the parser kept it. */
export function offsetOf(node: HogQLNode | null | undefined): number | undefined {
  const start = node?.['start'] as { offset?: unknown } | undefined;
  return typeof start?.offset === 'number' ? start.offset : undefined;
}

/** " at N" for a node with a position, else nothing. */
export function at(node: HogQLNode | null | undefined): string {
  const offset = offsetOf(node);
  return offset === undefined ? '' : ` at ${offset}`;
}
