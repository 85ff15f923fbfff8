import { QueryParams } from '@sightline/properties';
import { HogQLError, Printer, type HogQLFields, type HogQLNode } from '../hogql-compiler';
import { at, offsetOf, Scope, type TableRef } from './select-scope';
import { conjuncts, DAY_OPERATORS, EXACT_OPERATORS, FLIPPED, hasNullableSide, isConstant, isInstant } from './select-prefilter';
import { HOGQL_TABLES, type FieldSpec, type TableSpec } from './select-tables';
import { WINDOW_ONLY_FUNCTIONS } from './window-functions';

type Node = HogQLNode;

/** A value bound to a `{name}` placeholder (HogQLQuery's `values`). */
export type PlaceholderValue = string | number | boolean | null | (string | number | boolean)[];

export interface CompileSelectOptions {
  /** The project every table reference is bound to. */
  teamId: number;
  /** Values of the query's `{name}` placeholders, bound as parameters. */
  values?: Readonly<Record<string, PlaceholderValue>>;
  /**
   * The outermost query's LIMIT: `default` when it has none, at most `max`. One row more is
   * asked for, so the caller can tell there are more (hasMore). Absent: its own LIMIT, as written.
   */
  limits?: { default: number; max: number };
  /** The query's text, for column names written as expressions and what the parser leaves out of the tree (WITH ROLLUP). */
  text?: string;
  /** The project's time zone: date-time fields are read in it (default UTC). */
  timezone?: string;
}

export interface CompiledSelect {
  /** ClickHouse SQL; every value of the query is a bound parameter in `params`. */
  sql: string;
  params: Record<string, unknown>;
  /** The outermost query's column names, as HogQL names them (an alias, a field's last name, or the expression's text). */
  columns: string[];
  /** The LIMIT applied to the outermost query (limits given), else null; the SQL asks for one row more. */
  limit: number | null;
  offset: number;
}

/** The SQL of one SELECT and its columns: the names shown and the names outer queries read. */
interface CompiledQuery {
  sql: string;
  columns: string[];
  sqlColumns: string[];
}

/** An identifier as ClickHouse reads it: in backquotes, backslash and backquote escaped. */
export function quoteIdentifier(name: string): string {
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new HogQLError('Names may not contain control characters.');
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

const quoted = (name: string) => `'${name.slice(0, 60)}'`;

/** Join kinds as ClickHouse writes them; the text printed is the parser's, once it matches. */
const JOIN_TYPE = /^(GLOBAL )?((ANY|ALL|SEMI|ANTI|ASOF) )?((INNER|LEFT|RIGHT|FULL|CROSS)( OUTER)?( (ANY|ALL|SEMI|ANTI|ASOF))? )?JOIN$/;
const SET_OPERATORS = new Set(['UNION ALL', 'UNION DISTINCT', 'INTERSECT', 'INTERSECT DISTINCT', 'EXCEPT', 'EXCEPT DISTINCT']);
const IN_OPERATORS = new Map([
  ['in', 'IN'],
  ['not in', 'NOT IN'],
  ['global in', 'GLOBAL IN'],
  ['global not in', 'GLOBAL NOT IN'],
]);
/** Table names PostHog's schema has that this server does not keep. */
const NOT_KEPT = new Set(['cohort_people', 'sessions', 'session_replay_events', 'raw_sessions', 'log_entries', 'numbers']);

/** The expression printer never sees the events row through these: every field is resolved by the SELECT compiler. */
const NO_EVENT_FIELDS: HogQLFields = {
  event: '',
  timestamp: '',
  distinct_id: '',
  person_id: '',
  elements_chain: '',
  properties: '',
  person_properties: '',
  group_properties: () => '',
};

/** A HogQLError from a node without a position, given the position of the node that holds it. */
function positioned(error: unknown, node: Node): unknown {
  if (!(error instanceof HogQLError) || error.start !== undefined) return error;
  const offset = offsetOf(node);
  if (offset === undefined) return error;
  return new HogQLError(`${error.message.replace(/\.$/, '')} at ${offset}`, offset);
}

/** A non-negative integer written in the query (LIMIT, OFFSET, window frames). */
function integerConstant(node: Node | null | undefined, what: string, values: Readonly<Record<string, PlaceholderValue>>): number {
  let value: unknown = node?.['value'];
  if (node?.node === 'Placeholder') value = values[placeholderName(node)];
  else if (node?.node !== 'Constant') value = undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new HogQLError(`${what} must be a whole number${at(node)}`, offsetOf(node));
  return value;
}

function placeholderName(node: Node): string {
  const expr = node['expr'] as Node | undefined;
  const chain = expr?.node === 'Field' ? (expr['chain'] as unknown[]) : null;
  if (chain?.length === 1 && typeof chain[0] === 'string') return chain[0];
  if (typeof node['field'] === 'string') return node['field'];
  throw new HogQLError(`A placeholder must be a name, as in {name}${at(node)}`, offsetOf(node));
}

/**
 * Compiles PostHog's AST of a HogQL SELECT to ClickHouse SQL. Every table reference, at any
 * depth (FROM, JOIN, subquery, CTE, UNION branch, IN (SELECT …)), is resolved to a table of
 * select-tables.ts and printed as a subquery of that table with `team_id` = the bound project:
 * no query can read another project's rows, and no name from the query reaches the SQL except
 * quoted as an identifier. Expressions go through the expression printer's allow-list.
 */
class SelectCompiler extends Printer {
  private scope = new Scope(null);
  private nextAlias = 0;
  private readonly propertyNodes = new WeakSet<Node>();
  private lastWasProperty = false;
  private readonly team: string;
  /** The project's time zone as a bound parameter; null for UTC, the zone every date-time column is stored in. */
  private readonly timezone: string | null;

  constructor(
    params: QueryParams,
    private readonly options: CompileSelectOptions,
  ) {
    super({ params, fields: NO_EVENT_FIELDS, allowAggregations: true, timezone: options.timezone ?? 'UTC' });
    this.team = params.add(options.teamId, 'Int64');
    const timezone = options.timezone ?? 'UTC';
    this.timezone = timezone === 'UTC' ? null : params.add(timezone, 'String');
  }

  private get values() {
    return this.options.values ?? {};
  }

  /** The whole query: its SQL (the outermost LIMIT applied), columns, limit and offset. */
  compileTop(node: Node): Omit<CompiledSelect, 'params'> {
    const limits = this.options.limits;
    if (node.node === 'SelectQuery') {
      let limit: number | null = null;
      let offset = 0;
      if (limits) {
        limit = node['limit'] ? Math.min(integerConstant(node['limit'] as Node, 'LIMIT', this.values), limits.max) : limits.default;
        offset = node['offset'] ? integerConstant(node['offset'] as Node, 'OFFSET', this.values) : 0;
      }
      const compiled = this.selectQuery(node, null, limit === null ? null : { limit: limit + 1, offset });
      return { sql: compiled.sql, columns: compiled.columns, limit, offset };
    }
    if (node.node === 'SelectSetQuery') {
      const compiled = this.setQuery(node, null);
      if (!limits) return { sql: compiled.sql, columns: compiled.columns, limit: null, offset: 0 };
      return { sql: `SELECT * FROM (${compiled.sql}) LIMIT ${limits.default + 1}`, columns: compiled.columns, limit: limits.default, offset: 0 };
    }
    throw new HogQLError('A HogQL query must be a SELECT.');
  }

  private any(node: Node, parent: Scope | null): CompiledQuery {
    if (node.node === 'SelectQuery') return this.selectQuery(node, parent, null);
    if (node.node === 'SelectSetQuery') return this.setQuery(node, parent);
    throw new HogQLError(`Expected a SELECT${at(node)}`, offsetOf(node));
  }

  private setQuery(node: Node, parent: Scope | null): CompiledQuery {
    const first = this.any(node['initial_select_query'] as Node, parent);
    const parts = [`(${first.sql})`];
    for (const next of (node['subsequent_select_queries'] as Node[] | null) ?? []) {
      const operator = String(next['set_operator']);
      if (!SET_OPERATORS.has(operator)) throw new HogQLError(`${operator.slice(0, 30)} is not supported${at(next)}`, offsetOf(next));
      parts.push(operator, `(${this.any(next['select_query'] as Node, parent).sql})`);
    }
    return { sql: parts.join('\n'), columns: first.columns, sqlColumns: first.sqlColumns };
  }

  private selectQuery(node: Node, parent: Scope | null, outer: { limit: number; offset: number } | null): CompiledQuery {
    // A subquery is a query of its own: an aggregate around it does not hold its aggregates.
    const saved = { scope: this.scope, aggregates: this.aggregates.splice(0) };
    this.scope = new Scope(parent);
    try {
      return this.selectBody(node, outer);
    } finally {
      this.scope = saved.scope;
      this.aggregates.splice(0, this.aggregates.length, ...saved.aggregates);
    }
  }

  private refuse(condition: unknown, what: string, node: Node): void {
    if (condition) throw new HogQLError(`${what} is not supported${at(node)}`, offsetOf(node));
  }

  private selectBody(node: Node, outer: { limit: number; offset: number } | null): CompiledQuery {
    const scope = this.scope;
    this.refuse(node['prewhere'], 'PREWHERE (use WHERE)', node);
    this.refuse(node['settings'], 'SETTINGS', node);
    const columnCtes: Node[] = [];
    for (const cte of this.ctesOf(node)) {
      const name = this.userName(String(cte['name']), cte);
      if (cte['cte_type'] === 'column') {
        columnCtes.push(cte);
        scope.aliases.add(name);
      } else {
        if (scope.ctes.has(name)) throw new HogQLError(`CTE ${quoted(name)} is defined twice${at(cte)}`, offsetOf(cte));
        const compiled = this.any(cte['expr'] as Node, scope);
        scope.ctes.set(name, { sql: compiled.sql, columns: compiled.sqlColumns });
      }
    }
    // Tables first (their aliases resolve names everywhere), then the select list's aliases.
    const joins: { ref: TableRef; join: Node; sql: (prefilters: string[]) => string }[] = [];
    for (let join = node['select_from'] as Node | null; join; join = join['next_join'] as Node | null) {
      const ref = this.tableRef(join);
      scope.addTable(ref, join);
      joins.push({ ref, join, sql: (prefilters) => this.tableSql(ref, prefilters) });
    }
    const select = (node['select'] as Node[] | null) ?? [];
    for (const item of select) if (item.node === 'Alias') scope.aliases.add(this.userName(String(item['alias']), item));
    const arrayJoin = this.arrayJoin(node);

    const withSql = columnCtes.map((cte) => `${this.print(cte['expr'] as Node)} AS ${quoteIdentifier(String(cte['name']))}`);
    const { items, columns, sqlColumns } = this.selectList(select, node);
    const constraints = joins.map(({ join }, i) => (i === 0 ? '' : this.joinConstraint(join, joins[i - 1]!.ref)));
    const clauses: string[] = [];
    // A table filled with defaults for unmatched rows (an outer join's) would keep other rows if filtered first.
    const nullable = joins.some(({ join }, i) => i > 0 && hasNullableSide(String(join['join_type'] ?? 'JOIN')));
    const where = node['where'] as Node | null;
    const pushdown = where && !nullable ? this.prefilters(where, joins[0]!.ref) : { sql: [], exact: new Set<Node>() };
    if (where) {
      // A condition the first table's subquery applies exactly is not applied again to its rows.
      const all = conjuncts(where);
      const kept = all.filter((condition) => !pushdown.exact.has(condition));
      if (kept.length === all.length) clauses.push(`WHERE ${this.print(where)}`);
      else if (kept.length === 1) clauses.push(`WHERE ${this.print(kept[0]!)}`);
      else if (kept.length > 1) clauses.push(`WHERE (${kept.map((condition) => `(${this.print(condition)})`).join(' AND ')})`);
    }
    const groupBy = (node['group_by'] as Node[] | null) ?? [];
    if (groupBy.length) clauses.push(this.groupBy(node, groupBy));
    if (node['having']) clauses.push(`HAVING ${this.print(node['having'] as Node)}`);
    const windows = Object.entries((node['window_exprs'] as Record<string, Node> | null) ?? {});
    if (windows.length)
      clauses.push(`WINDOW ${windows.map(([name, w]) => `${quoteIdentifier(this.userName(name, w))} AS (${this.windowSpec(w)})`).join(', ')}`);
    if (node['qualify']) clauses.push(`QUALIFY ${this.print(node['qualify'] as Node)}`);
    const orderBy = (node['order_by'] as Node[] | null) ?? [];
    if (orderBy.length) clauses.push(`ORDER BY ${orderBy.map((o) => this.orderExpr(o)).join(', ')}`);
    const limitBy = node['limit_by'] as Node | null;
    if (limitBy) {
      const n = integerConstant(limitBy['n'] as Node, 'LIMIT … BY', this.values);
      const offset = limitBy['offset_value'] ? integerConstant(limitBy['offset_value'] as Node, 'LIMIT … BY offset', this.values) : null;
      const exprs = ((limitBy['exprs'] as Node[] | null) ?? []).map((e) => this.print(e));
      clauses.push(`LIMIT ${offset === null ? '' : `${offset}, `}${n} BY ${exprs.join(', ')}`);
    }
    if (outer) {
      clauses.push(`LIMIT ${this.ctx.params.add(outer.limit, 'UInt64')}`);
      if (outer.offset) clauses.push(`OFFSET ${this.ctx.params.add(outer.offset, 'UInt64')}`);
    } else {
      if (node['limit']) clauses.push(`LIMIT ${integerConstant(node['limit'] as Node, 'LIMIT', this.values)}`);
      if (node['offset']) clauses.push(`OFFSET ${integerConstant(node['offset'] as Node, 'OFFSET', this.values)}`);
    }
    if (node['limit_with_ties']) clauses.push('WITH TIES');

    const prefilters = (i: number) => (i === 0 ? pushdown.sql : []);
    // Last: the tables' subqueries select the fields the query was found to use.
    const from = joins.map(({ join, sql }, i) => {
      if (i === 0) return `FROM ${sql(prefilters(i))}`;
      const type = String(join['join_type'] ?? 'JOIN');
      if (!JOIN_TYPE.test(type)) throw new HogQLError(`${type.slice(0, 30)} is not supported${at(join)}`, offsetOf(join));
      return `${type} ${sql(prefilters(i))}${constraints[i]}`;
    });
    const head = [...(withSql.length ? [`WITH ${withSql.join(', ')}`] : []), `SELECT ${node['distinct'] === true ? 'DISTINCT ' : ''}${items.join(', ')}`];
    return { sql: [...head, ...from, ...(arrayJoin ? [arrayJoin] : []), ...clauses].join('\n'), columns, sqlColumns };
  }

  private ctesOf(node: Node): Node[] {
    const ctes = node['ctes'];
    if (!ctes) return [];
    return Array.isArray(ctes) ? (ctes as Node[]) : Object.values(ctes as Record<string, Node>);
  }

  /** A name the query gives (alias, CTE, window): names beginning `__` are this compiler's own. */
  private userName(name: string, node: Node): string {
    if (name.startsWith('__') || name === 'team_id') throw new HogQLError(`The name ${quoted(name)} is reserved${at(node)}`, offsetOf(node));
    return name;
  }

  private arrayJoin(node: Node): string | null {
    const op = node['array_join_op'];
    if (!op) return null;
    if (op !== 'ARRAY JOIN' && op !== 'LEFT ARRAY JOIN') throw new HogQLError(`${String(op).slice(0, 30)} is not supported${at(node)}`, offsetOf(node));
    const list = (node['array_join_list'] as Node[] | null) ?? [];
    for (const item of list) if (item.node === 'Alias') this.scope.aliases.add(this.userName(String(item['alias']), item));
    return `${String(op)} ${list.map((item) => this.print(item)).join(', ')}`;
  }

  private selectList(select: Node[], query: Node): { items: string[]; columns: string[]; sqlColumns: string[] } {
    if (select.length === 0) throw new HogQLError(`A SELECT needs at least one column${at(query)}`, offsetOf(query));
    const items: string[] = [];
    const columns: string[] = [];
    const sqlColumns: string[] = [];
    const taken = new Set<string>(this.scope.aliases);
    const add = (sql: string, name: string, userAlias: boolean) => {
      let sqlName = name;
      if (!userAlias) for (let n = 2; taken.has(sqlName); n++) sqlName = `${name}_${n}`;
      taken.add(sqlName);
      items.push(`${sql} AS ${quoteIdentifier(sqlName)}`);
      columns.push(name);
      sqlColumns.push(sqlName);
    };
    for (const item of select) {
      if (item.node === 'Alias') {
        add(this.print(item['expr'] as Node), String(item['alias']), true);
        continue;
      }
      const chain = item.node === 'Field' ? (item['chain'] as unknown[]).map(String) : null;
      if (chain && chain[chain.length - 1] === '*') {
        for (const { sql, name } of this.asterisk(chain.slice(0, -1), item)) add(sql, name, false);
        continue;
      }
      add(this.print(item), chain ? chain[chain.length - 1]! : this.sourceText(item), false);
    }
    return { items, columns, sqlColumns };
  }

  /** What `*` (or `t.*`) selects: every table's listed fields, or a subquery's columns. */
  private asterisk(qualifier: string[], node: Node): { sql: string; name: string }[] {
    let refs = this.scope.tables;
    if (qualifier.length === 1) {
      const ref = this.scope.tablesByName.get(qualifier[0]!);
      if (!ref) throw new HogQLError(`Unknown table ${quoted(qualifier[0]!)}${at(node)}`, offsetOf(node));
      refs = [ref];
    } else if (qualifier.length > 1) throw new HogQLError(`Unknown table ${quoted(qualifier.join('.'))}${at(node)}`, offsetOf(node));
    if (refs.length === 0) throw new HogQLError(`SELECT * needs a table${at(node)}`, offsetOf(node));
    return refs.flatMap((ref) =>
      (ref.kind === 'table' ? ref.table.asterisk : ref.columns).map((name) => {
        if (ref.kind === 'table') ref.used.add(name);
        return { sql: `${ref.sqlAlias}.${quoteIdentifier(name)}`, name };
      }),
    );
  }

  /** An expression's own text in the query (the name of its column), or its kind when the text is not known. */
  private sourceText(node: Node): string {
    const start = offsetOf(node);
    const end = (node['end'] as { offset?: unknown } | undefined)?.offset;
    // Line breaks and other control characters (a name may hold none) read as spaces.
    if (this.options.text && start !== undefined && typeof end === 'number')
      return this.options.text
        .slice(start, end)
        .replace(/[\s\u0000-\u001f\u007f]+/g, ' ')
        .slice(0, 200);
    return String(node.node);
  }

  private groupBy(query: Node, exprs: Node[]): string {
    const printed = exprs.map((e) => this.print(e)).join(', ');
    const mode = query['group_by_mode'];
    if (mode === 'rollup' || mode === 'cube') return `GROUP BY ${mode.toUpperCase()}(${printed})`;
    // The parser accepts `GROUP BY … WITH ROLLUP|CUBE|TOTALS` but leaves the modifier out of its
    // tree: it is read from the text right after the last expression.
    const end = (exprs[exprs.length - 1]!['end'] as { offset?: unknown } | undefined)?.offset;
    const after = typeof end === 'number' && this.options.text ? this.options.text.slice(end) : '';
    const modifier = /^(?:\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*WITH\s+(ROLLUP|CUBE|TOTALS)\b/i.exec(after)?.[1]?.toUpperCase();
    if (modifier === 'TOTALS') throw new HogQLError(`WITH TOTALS is not supported${at(query)}`, offsetOf(query));
    return `GROUP BY ${printed}${modifier ? ` WITH ${modifier}` : ''}`;
  }

  private orderExpr(node: Node): string {
    if (node.node !== 'OrderExpr') return this.print(node);
    const order = node['order'] === 'DESC' ? 'DESC' : 'ASC';
    this.refuse(node['with_fill'], 'WITH FILL', node);
    return `${this.print(node['expr'] as Node)} ${order}`;
  }

  private windowSpec(node: Node): string {
    const parts: string[] = [];
    const partition = (node['partition_by'] as Node[] | null) ?? [];
    if (partition.length) parts.push(`PARTITION BY ${partition.map((e) => this.print(e)).join(', ')}`);
    const order = (node['order_by'] as Node[] | null) ?? [];
    if (order.length) parts.push(`ORDER BY ${order.map((o) => this.orderExpr(o)).join(', ')}`);
    const method = node['frame_method'];
    if (method) {
      if (method !== 'ROWS' && method !== 'RANGE')
        throw new HogQLError(`Window frame ${String(method).slice(0, 20)} is not supported${at(node)}`, offsetOf(node));
      const start = this.frameBound(node['frame_start'] as Node | null);
      const end = node['frame_end'] ? this.frameBound(node['frame_end'] as Node) : null;
      parts.push(end === null ? `${method} ${start}` : `${method} BETWEEN ${start} AND ${end}`);
    }
    return parts.join(' ');
  }

  private frameBound(node: Node | null): string {
    if (!node) throw new HogQLError('A window frame needs a start.');
    const type = node['frame_type'];
    if (type === 'CURRENT ROW') return 'CURRENT ROW';
    if (type !== 'PRECEDING' && type !== 'FOLLOWING')
      throw new HogQLError(`Window frame ${String(type).slice(0, 20)} is not supported${at(node)}`, offsetOf(node));
    const value = node['frame_value'];
    if (value === null || value === undefined) return `UNBOUNDED ${type}`;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
      throw new HogQLError(`A window frame's rows must be a whole number${at(node)}`, offsetOf(node));
    return `${value} ${type}`;
  }

  private joinConstraint(join: Node, previous: TableRef): string {
    const constraint = join['constraint'] as Node | null;
    if (!constraint) return '';
    const expr = constraint['expr'] as Node;
    if (constraint['constraint_type'] === 'USING') {
      const fields = expr.node === 'Tuple' ? (expr['exprs'] as Node[]) : [expr];
      const names = fields.map((f) => {
        const chain = f.node === 'Field' ? (f['chain'] as unknown[]) : [];
        if (chain.length !== 1 || typeof chain[0] !== 'string') throw new HogQLError(`USING takes column names${at(f)}`, offsetOf(f));
        const name = chain[0];
        const current = this.scope.tables[this.scope.tables.findIndex((t) => t === previous) + 1]!;
        for (const ref of [previous, current]) {
          if (!this.hasColumn(ref, name)) throw new HogQLError(`Unknown field ${quoted(name)} in USING${at(f)}`, offsetOf(f));
          if (ref.kind === 'table') ref.used.add(name);
        }
        return quoteIdentifier(name);
      });
      return ` USING (${names.join(', ')})`;
    }
    return ` ON ${this.print(expr)}`;
  }

  private hasColumn(ref: TableRef, name: string): boolean {
    return ref.kind === 'table' ? ref.table.fields.has(name) : ref.columns.includes(name);
  }

  /** A FROM or JOIN item: a known table, a CTE, or a subquery; anything else is refused with its position. */
  private tableRef(join: Node): TableRef {
    const table = join['table'] as Node;
    const alias = join['alias'] === null || join['alias'] === undefined ? null : this.userName(String(join['alias']), join);
    this.refuse(join['sample'], 'SAMPLE', join);
    this.refuse(join['column_aliases'], 'Column aliases of a table', join);
    const sqlAlias = `__t${this.nextAlias++}`;
    if (table.node === 'SelectQuery' || table.node === 'SelectSetQuery') {
      const compiled = this.any(table, this.scope);
      return { kind: 'subquery', name: alias, sqlAlias, columns: compiled.sqlColumns, sql: compiled.sql };
    }
    if (table.node !== 'Field') throw new HogQLError(`A table must be named or be a subquery${at(join)}`, offsetOf(join));
    const chain = (table['chain'] as unknown[]).map(String);
    const name = chain.join('.');
    const where = offsetOf(table) ?? offsetOf(join);
    const position = where === undefined ? '' : ` at ${where}`;
    if (join['table_args'] !== undefined && join['table_args'] !== null) {
      throw new HogQLError(`Table functions are not allowed: ${quoted(name)}${position}`, where);
    }
    const cte = chain.length === 1 ? this.scope.cte(name) : undefined;
    if (cte) return { kind: 'subquery', name: alias ?? name, sqlAlias, columns: cte.columns, sql: cte.sql };
    const spec = chain.length === 1 ? HOGQL_TABLES.get(name) : undefined;
    if (!spec) {
      const hint = NOT_KEPT.has(name) ? ' (this server does not keep it)' : ` (tables: ${[...HOGQL_TABLES.keys()].join(', ')})`;
      throw new HogQLError(`Unknown table ${quoted(name)}${position}${hint}`, where);
    }
    return { kind: 'table', name: alias ?? name, sqlAlias, table: spec, used: new Set() };
  }

  /** A table reference as SQL: its subquery, with the bound project's rows only (and the query's conditions it may apply first). */
  private tableSql(ref: TableRef, prefilters: string[]): string {
    if (ref.kind === 'subquery') return `(${ref.sql}) AS ${ref.sqlAlias}`;
    return `(${tableSubquery(ref.table, [...ref.used], this.team, this.timezone, prefilters)}) AS ${ref.sqlAlias}`;
  }

  /**
   * The conditions of `where` (its top-level AND) that the table's subquery may apply before its
   * FINAL merge, over its source's columns (select-prefilter.ts): a sort-key field compared with
   * constants as written, a date-time of the key compared with an instant as its UTC day (for a
   * project in another time zone than UTC).
   * `exact` holds the conditions applied as written: rows FINAL collapses share the sort key, so
   * the subquery's rows all meet them and the WHERE need not test them again. The widened ones
   * stay in the WHERE.
   */
  private prefilters(where: Node, ref: TableRef): { sql: string[]; exact: Set<Node> } {
    const exactConditions = new Set<Node>();
    if (ref.kind !== 'table' || !ref.table.sortKey) return { sql: [], exact: exactConditions };
    const { exact, day } = ref.table.sortKey;
    /** The field of the table `node` names, if it is one of `names`. */
    const keyField = (node: Node, names: readonly string[]) => {
      const chain = node.node === 'Field' ? (node['chain'] as unknown[]) : [];
      const name = chain.length === 1 || chain.length === 2 ? names.find((n) => n === chain[chain.length - 1]) : undefined;
      // Resolved as the query resolves it: a column alias or another table's field of that name is not this one.
      return name !== undefined && this.print(node) === `${ref.sqlAlias}.${quoteIdentifier(name)}` ? name : undefined;
    };
    const source = (name: string) => ref.table.fields.get(name)!.sql;
    const day_ = (name: string, op: string, instant: Node) => `(toDate(${source(name)}) ${DAY_OPERATORS.get(op)!} toDate(${this.print(instant)}, 'UTC'))`;
    // A UTC project's date-times are read as stored and ClickHouse's key analysis already uses the
    // outer condition on them; the widened copy would only cost a toDate per row (bench:sql, 10M
    // events: daily pageviews 43 → 50 ms). Through toTimeZone it cannot, and would read every month.
    const widenDays = this.timezone !== null;
    const pushed: string[] = [];
    for (const condition of conjuncts(where)) {
      if (condition.node === 'CompareOperation') {
        let op = String(condition['op']);
        let [field, value] = [condition['left'] as Node, condition['right'] as Node];
        if (field.node !== 'Field' && FLIPPED.has(op)) [field, value, op] = [value, field, FLIPPED.get(op)!];
        if (!isConstant(value)) continue;
        const exactName = EXACT_OPERATORS.has(op) ? keyField(field, exact) : undefined;
        if (exactName) {
          const sql = this.print(condition);
          pushed.push(sql.split(`${ref.sqlAlias}.${quoteIdentifier(exactName)}`).join(source(exactName)));
          exactConditions.add(condition);
          continue;
        }
        const dayName = widenDays && DAY_OPERATORS.has(op) && isInstant(value) ? keyField(field, day) : undefined;
        if (dayName) pushed.push(day_(dayName, op, value));
      } else if (widenDays && condition.node === 'BetweenExpr' && condition['negated'] !== true) {
        const [low, high] = [condition['low'] as Node, condition['high'] as Node];
        const dayName = isInstant(low) && isInstant(high) ? keyField(condition['expr'] as Node, day) : undefined;
        if (dayName) pushed.push(day_(dayName, '>=', low), day_(dayName, '<=', high));
      }
    }
    return { sql: pushed, exact: exactConditions };
  }

  // ---- expressions ----

  override print(node: Node, depth = 0): string {
    try {
      return this.printNode(node, depth);
    } catch (error) {
      throw positioned(error, node);
    }
  }

  protected override isProperty(node: Node): boolean {
    return this.propertyNodes.has(node);
  }

  protected override field(chain: unknown[]): string {
    return this.resolve(chain.map(String));
  }

  /** A placeholder bound to text is text too (PostHog puts its value in the tree as a constant). */
  override isText(node: Node): boolean {
    return super.isText(node) || (node.node === 'Placeholder' && typeof this.values[placeholderName(node)] === 'string');
  }

  private printNode(node: Node, depth: number): string {
    const d = depth + 1;
    switch (node.node) {
      case 'Field':
      case 'ArrayAccess': {
        this.lastWasProperty = false;
        const sql = node.node === 'Field' ? this.resolve((node['chain'] as unknown[]).map(String)) : super.print(node, depth);
        if (this.lastWasProperty) this.propertyNodes.add(node);
        this.lastWasProperty = false;
        return sql;
      }
      case 'Alias': {
        const name = this.userName(String(node['alias']), node);
        this.scope.aliases.add(name);
        return `(${this.print(node['expr'] as Node, d)} AS ${quoteIdentifier(name)})`;
      }
      case 'Placeholder':
        return this.placeholder(node);
      case 'BetweenExpr': {
        const not = node['negated'] === true ? 'NOT ' : '';
        return `(${this.print(node['expr'] as Node, d)} ${not}BETWEEN ${this.print(node['low'] as Node, d)} AND ${this.print(node['high'] as Node, d)})`;
      }
      case 'TupleAccess': {
        const index = node['index'];
        if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 1) throw new HogQLError('A tuple index must be a whole number from 1.');
        return `tupleElement(${this.print(node['tuple'] as Node, d)}, ${index})`;
      }
      case 'SelectQuery':
      case 'SelectSetQuery':
        return `(${this.any(node, this.scope).sql})`;
      case 'WindowFunction':
        return this.windowFunction(node, d);
      default:
        return super.print(node, depth);
    }
  }

  protected override compare(node: Node, depth: number): string {
    const op = String(node['op']);
    const right = node['right'] as Node;
    const inOp = IN_OPERATORS.get(op);
    if (inOp && (right.node === 'SelectQuery' || right.node === 'SelectSetQuery')) {
      return `(${this.print(node['left'] as Node, depth)} ${inOp} (${this.any(right, this.scope).sql}))`;
    }
    // A list given as a value: `x IN {ids}`.
    if (inOp && right.node === 'Placeholder') return `(${this.print(node['left'] as Node, depth)} ${inOp} ${this.placeholder(right)})`;
    if (op === 'in cohort' || op === 'not in cohort') throw new HogQLError('IN COHORT is not supported here; read static_cohort_people instead.');
    return super.compare(node, depth);
  }

  private windowFunction(node: Node, depth: number): string {
    const name = String(node['name']);
    const args = (node['exprs'] as Node[] | null) ?? [];
    const params = (node['args'] as Node[] | null) ?? [];
    let call: string;
    const windowOnly = WINDOW_ONLY_FUNCTIONS.get(name);
    if (windowOnly) {
      if (params.length) throw new HogQLError(`${name} takes no parameters.`);
      if (args.length < windowOnly.min || args.length > windowOnly.max)
        throw new HogQLError(`${name} takes ${windowOnly.min === windowOnly.max ? windowOnly.min : `${windowOnly.min} to ${windowOnly.max}`} arguments.`);
      call = `${name}(${args.map((a) => this.print(a, depth)).join(', ')})`;
    } else {
      // An aggregate over a window: the allow-list decides, as for any call.
      call = this.print({ node: 'Call', name, args, params: params.length ? params : null, distinct: false }, depth);
    }
    const over = node['over_identifier'];
    if (typeof over === 'string') return `${call} OVER ${quoteIdentifier(over)}`;
    return `${call} OVER (${this.windowSpec((node['over_expr'] as Node | null) ?? { node: 'WindowExpr' })})`;
  }

  private placeholder(node: Node): string {
    const name = placeholderName(node);
    if (!Object.hasOwn(this.values, name)) throw new HogQLError(`No value given for the placeholder {${name.slice(0, 60)}}`);
    return bindValue(this.ctx.params, this.values[name]!, name);
  }

  /** A field, by PostHog's resolution order: lambda argument, column alias, table alias, then the tables' fields. */
  private resolve(chain: string[]): string {
    const [head, ...rest] = chain as [string, ...string[]];
    const scope = this.scope;
    if (head === '*') throw new HogQLError('* is only allowed in a SELECT list or count(*).');
    const lambdaName = rest.length === 0 ? this.lambdaName(head) : undefined;
    if (lambdaName !== undefined) return lambdaName;
    if (rest.length === 0 && scope.aliases.has(head)) return quoteIdentifier(head);
    const named = scope.tablesByName.get(head);
    if (named && rest.length > 0) return this.tableField(named, rest, chain);
    const matches = scope.tables.filter((ref) => this.hasField(ref, chain));
    if (matches.length > 1) throw new HogQLError(`Field ${quoted(chain.join('.'))} is ambiguous: name its table`);
    if (matches.length === 1) return this.tableField(matches[0]!, chain, chain);
    if (named) throw new HogQLError(`${quoted(head)} is a table: name one of its fields, as in ${head.slice(0, 60)}.<field>`);
    throw new HogQLError(`Unknown field ${quoted(chain.join('.'))}`);
  }

  private hasField(ref: TableRef, chain: string[]): boolean {
    if (ref.kind === 'subquery') return ref.columns.includes(chain[0]!);
    if (ref.table.fields.has(chain[0]!)) return true;
    return [...ref.table.virtual.keys()].some((path) => path.split('.')[0] === chain[0]);
  }

  private tableField(ref: TableRef, chain: string[], written: string[]): string {
    const unknown = () => new HogQLError(`Unknown field ${quoted(written.join('.'))}`);
    if (ref.kind === 'subquery') {
      if (!ref.columns.includes(chain[0]!)) throw unknown();
      const sql = `${ref.sqlAlias}.${quoteIdentifier(chain[0]!)}`;
      if (chain.length === 1) return sql;
      if (chain.length === 2) return this.propertyOf(sql, chain[1]!);
      throw unknown();
    }
    const read = (name: string, keys: string[]): string => {
      const spec = ref.table.fields.get(name)!;
      ref.used.add(name);
      const sql = `${ref.sqlAlias}.${quoteIdentifier(name)}`;
      if (keys.length === 0) return sql;
      if (spec.json && keys.length === 1) return this.propertyOf(sql, keys[0]!);
      throw unknown();
    };
    if (ref.table.fields.has(chain[0]!)) return read(chain[0]!, chain.slice(1));
    for (let length = Math.min(3, chain.length); length >= 1; length--) {
      const virtual = ref.table.virtual.get(chain.slice(0, length).join('.'));
      if (!virtual) continue;
      const keys = chain.slice(length);
      if (virtual.properties ? keys.length !== 1 : keys.length !== 0) throw unknown();
      return read(virtual.field, keys);
    }
    throw unknown();
  }

  private propertyOf(sql: string, key: string): string {
    this.lastWasProperty = true;
    return this.property(sql, key);
  }

  /**
   * A property as HogQL reads it (a string unescaped, any other value as its JSON text, NULL when
   * missing or null), in one parse of the JSON: a whole query reads properties of every row, where
   * the expression printer's form parses each value up to four times.
   */
  protected override propertyText(column: string, key: string): string {
    return `JSONExtract(${column}, ${key}, 'Nullable(String)')`;
  }
}

/** A placeholder's value as a bound parameter of its type. */
function bindValue(params: QueryParams, value: PlaceholderValue, name: string): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return params.add(value, 'String');
  if (typeof value === 'boolean') return params.add(value, 'Bool');
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new HogQLError(`The value of {${name.slice(0, 60)}} must be a finite number.`);
    return params.add(value, Number.isSafeInteger(value) ? 'Int64' : 'Float64');
  }
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) return params.add(value, 'Array(String)');
    if (value.every((v) => typeof v === 'number' && Number.isSafeInteger(v))) return params.add(value, 'Array(Int64)');
    if (value.every((v) => typeof v === 'number' && Number.isFinite(v))) return params.add(value, 'Array(Float64)');
    if (value.every((v) => typeof v === 'boolean')) return params.add(value, 'Array(Bool)');
  }
  throw new HogQLError(`The value of {${name.slice(0, 60)}} must be a text, a number, true/false, null or a list of one of these.`);
}

/**
 * A table's subquery: the fields used (one constant column when none), the project's rows only.
 * Date-times are read in `timezone` (a bound parameter), or as stored (UTC) when it is null: the
 * same values and type, and ClickHouse's primary key then serves a condition on them, which it
 * cannot through toTimeZone (a query over one month would read every month).
 */
export function tableSubquery(table: TableSpec, used: string[], team: string, timezone: string | null, prefilters: string[] = []): string {
  const fields = used.map((name) => [name, table.fields.get(name)!] as const);
  const overrides = fields.some(([, spec]) => spec.needsOverrides);
  const source = table.source(team, overrides);
  const read = (spec: FieldSpec) => (spec.dateTime && timezone !== null ? `toTimeZone(${spec.sql}, ${timezone})` : spec.sql);
  const columns = fields.length ? fields.map(([name, spec]) => `${read(spec)} AS ${quoteIdentifier(name)}`).join(', ') : '1 AS `__row`';
  return [
    `SELECT ${columns}`,
    `FROM ${source.from}`,
    `WHERE ${[source.where, ...prefilters].join(' AND ')}`,
    ...(source.groupBy ? [`GROUP BY ${source.groupBy}`] : []),
    ...(source.having ? [`HAVING ${source.having}`] : []),
  ].join('\n    ');
}

/**
 * PostHog's AST of a HogQL SELECT (HogQLCompiler.parseSelect) as ClickHouse SQL bound to one
 * project; errors are HogQLErrors naming the problem and, when known, its position (`start`).
 */
export function compileSelect(ast: HogQLNode, options: CompileSelectOptions): CompiledSelect {
  if (!Number.isSafeInteger(options.teamId)) throw new Error('compileSelect: teamId must be an integer');
  const params = new QueryParams('h');
  const compiled = new SelectCompiler(params, options).compileTop(ast);
  return { ...compiled, params: params.values };
}
