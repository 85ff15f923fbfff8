/**
 * Checks of SQL built for ClickHouse's cluster layout (libs/clickhouse/src/cluster/layout.ts),
 * which no test can run: this machine has no cluster. ClickHouse itself (chdb, through the test
 * front) parses and formats each statement; `distributedReadsWithoutGlobal` applies the rule a
 * cluster enforces at run time (distributed_product_mode = deny) to the text.
 */
import { DISTRIBUTED_TABLES, type ClickHouseClient } from '@sightline/clickhouse';
import { readServicesFile } from './service-info';

/** The statement as ClickHouse's own formatter prints it (formatQuery); throws ClickHouse's error when it does not parse. */
export async function formatWithClickHouse(sql: string): Promise<string> {
  const literal = `'${sql.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const response = await fetch(readServicesFile().clickhouseUrl, { method: 'POST', body: `SELECT formatQuery(${literal}) AS f FORMAT JSONEachRow` });
  const text = await response.text();
  if (!response.ok) throw new Error(`ClickHouse does not parse this statement: ${text.trim().slice(0, 500)}\n${sql}`);
  return (JSON.parse(text) as { f: string }).f;
}

interface Token {
  upper: string;
  kind: 'word' | 'other';
}
type Item = Token | Group;
interface Group {
  items: Item[];
}
const isGroup = (item: Item | undefined): item is Group => item !== undefined && 'items' in item;
const word = (item: Item | undefined): string | null => (item && !isGroup(item) && item.kind === 'word' ? item.upper : null);

/** Words, punctuation and parenthesised groups; quoted text, comments and {parameters} become opaque tokens. */
function parse(sql: string): Item[] {
  const root: Group = { items: [] };
  const stack: Group[] = [root];
  const top = () => stack[stack.length - 1]!;
  let i = 0;
  const skipQuoted = (quote: string) => {
    for (i++; i < sql.length; i++) {
      if (sql[i] === '\\') i++;
      else if (sql[i] === quote) {
        if (sql[i + 1] === quote) i++;
        else return;
      }
    }
  };
  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s/.test(c)) i++;
    else if (sql.startsWith('--', i)) i = sql.indexOf('\n', i) < 0 ? sql.length : sql.indexOf('\n', i);
    else if (sql.startsWith('/*', i)) i = sql.indexOf('*/', i) < 0 ? sql.length : sql.indexOf('*/', i) + 2;
    else if (c === "'") {
      skipQuoted("'");
      i++;
      top().items.push({ upper: "'…'", kind: 'other' });
    } else if (c === '`' || c === '"') {
      const start = i;
      skipQuoted(c);
      i++;
      top().items.push({ upper: sql.slice(start + 1, i - 1).toUpperCase(), kind: 'word' });
    } else if (c === '{') {
      i = sql.indexOf('}', i) + 1 || sql.length;
      top().items.push({ upper: '{param}', kind: 'other' });
    } else if (c === '(') {
      const group: Group = { items: [] };
      top().items.push(group);
      stack.push(group);
      i++;
    } else if (c === ')') {
      if (stack.length === 1) throw new Error(`unbalanced ) at ${i}`);
      stack.pop();
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i))!;
      top().items.push({ upper: match[0].toUpperCase(), kind: 'word' });
      i += match[0].length;
    } else {
      top().items.push({ upper: c, kind: 'other' });
      i++;
    }
  }
  if (stack.length !== 1) throw new Error('unbalanced (');
  return root.items;
}

const isSubquery = (group: Group): boolean => {
  const first = group.items[0];
  return word(first) === 'SELECT' || word(first) === 'WITH' || (isGroup(first) && group.items.length === 1 && isSubquery(first));
};

/** Whether anything under `items` reads one of `tables` (a FROM or JOIN naming it). */
function reads(items: Item[], tables: Set<string>): boolean {
  return items.some((item, i) => {
    if (isGroup(item)) return reads(item.items, tables);
    const next = word(items[i + 1]);
    return (item.upper === 'FROM' || item.upper === 'JOIN') && next !== null && tables.has(next);
  });
}

const JOIN_MODIFIERS = new Set(['LEFT', 'RIGHT', 'INNER', 'FULL', 'OUTER', 'CROSS', 'ANY', 'ALL', 'SEMI', 'ANTI', 'ASOF', 'PASTE']);

/** Whether the JOIN at `at` is GLOBAL (GLOBAL comes before its modifiers). */
function isGlobalJoin(items: Item[], at: number): boolean {
  let i = at - 1;
  while (i >= 0 && JOIN_MODIFIERS.has(word(items[i]) ?? '')) i--;
  return word(items[i]) === 'GLOBAL';
}

/** The select bodies of a query level (split at UNION / EXCEPT / INTERSECT). */
function selectBodies(items: Item[]): Item[][] {
  const bodies: Item[][] = [[]];
  for (const item of items) {
    if (['UNION', 'EXCEPT', 'INTERSECT'].includes(word(item) ?? '')) bodies.push([]);
    else bodies[bodies.length - 1]!.push(item);
  }
  return bodies;
}

function checkQuery(items: Item[], tables: Set<string>, problems: string[]): void {
  for (const body of selectBodies(items)) checkSelect(body, tables, problems);
}

/**
 * One SELECT: when its FROM names a distributed table, every shard runs it, so a JOIN or IN in
 * it (expressions included, subqueries excluded) whose right side reads a distributed table must
 * be GLOBAL. Subqueries are checked as queries of their own.
 */
function checkSelect(items: Item[], tables: Set<string>, problems: string[]): void {
  const from = items.findIndex((item) => word(item) === 'FROM');
  const source = from >= 0 ? word(items[from + 1]) : null;
  const onShards = source !== null && tables.has(source);
  const scan = (level: Item[]) => {
    level.forEach((item, i) => {
      const before = word(level[i - 1]);
      if (isGroup(item)) {
        if (!isSubquery(item)) return scan(item.items);
        checkQuery(item.items, tables, problems);
        if (!onShards || !reads(item.items, tables)) return;
        if (before === 'JOIN' && !isGlobalJoin(level, i - 1))
          problems.push(`JOIN of a subquery reading a distributed table, in a query over ${source}, is not GLOBAL`);
        if (before === 'IN' && word(level[i - 2]) !== 'GLOBAL' && !(word(level[i - 2]) === 'NOT' && word(level[i - 3]) === 'GLOBAL')) {
          problems.push(`IN over a subquery reading a distributed table, in a query over ${source}, is not GLOBAL`);
        }
        return;
      }
      const name = word(item);
      if (onShards && name !== null && tables.has(name) && before === 'JOIN' && !isGlobalJoin(level, i - 1)) {
        problems.push(`JOIN of the distributed table ${name}, in a query over ${source}, is not GLOBAL`);
      }
    });
  };
  scan(items);
}

/**
 * Where a query sent to every shard (its FROM is a distributed table) joins or filters by IN
 * on a subquery that reads a distributed table without GLOBAL: each shard would send that
 * subquery to every shard again (ClickHouse refuses: distributed_product_mode = deny), where
 * GLOBAL runs it once and ships the result. Empty when there is none.
 */
export function distributedReadsWithoutGlobal(sql: string, distributedTables: readonly string[] = DISTRIBUTED_TABLES): string[] {
  const problems: string[] = [];
  checkQuery(parse(sql), new Set(distributedTables.map((t) => t.toUpperCase())), problems);
  return problems;
}

/** What a client was asked to run: the SQL of each query, command and exec, `INSERT INTO t` for an insert. */
export interface RecordedStatements {
  client: ClickHouseClient;
  statements: string[];
}

/**
 * `client` with every statement it sends recorded. `answer`, when given, replaces the server
 * for statements it answers (an array of rows for a query, anything for a command): a test of
 * cluster-only statements (ON CLUSTER, clusterAllReplicas) records them without running them.
 */
export function recordStatements(client: ClickHouseClient, answer?: (sql: string) => unknown[] | undefined): RecordedStatements {
  const statements: string[] = [];
  const answered = (rows: unknown[]) => ({ json: async () => rows, text: async () => rows.map((r) => JSON.stringify(r)).join('\n'), close: () => undefined });
  const recording = new Proxy(client, {
    get(target, property, receiver) {
      const original = Reflect.get(target, property, receiver) as unknown;
      if (typeof original !== 'function') return original;
      if (property === 'query' || property === 'command' || property === 'exec') {
        return async (params: { query: string }) => {
          statements.push(params.query);
          const rows = answer?.(params.query);
          if (rows !== undefined) return property === 'query' ? answered(rows) : { query_id: 'recorded' };
          return (original as (p: unknown) => Promise<unknown>).call(target, params);
        };
      }
      if (property === 'insert') {
        return async (params: { table: string }) => {
          statements.push(`INSERT INTO ${params.table}`);
          return (original as (p: unknown) => Promise<unknown>).call(target, params);
        };
      }
      return (original as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return { client: recording, statements };
}
