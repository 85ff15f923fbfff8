import { join } from 'node:path';
import { propertyRawSql, re2Problem, type QueryParams } from '@sightline/properties';
import { LRUCache } from 'lru-cache';
import { parse as parseJson } from 'lossless-json';
import { table } from './functions/function-spec';
import { printCall, type CallContext } from './print-call';

/** The SQL of the events row a HogQL expression may read. */
export interface HogQLFields {
  event: string;
  timestamp: string;
  distinct_id: string;
  person_id: string;
  elements_chain: string;
  /** JSON text of the event's properties. */
  properties: string;
  /** JSON text of the person's properties. */
  person_properties: string;
  /** JSON text of group N's properties. */
  group_properties(index: number): string;
  /**
   * The row's other columns by their HogQL name, dotted for a virtual table's (`uuid`,
   * `created_at`, `person_mode`, `person.created_at`); a name absent here is refused.
   */
  columns?: Readonly<Record<string, string>>;
  /** SQL of a person property computed rather than stored (`person.$virt_…`); null or absent: none. */
  virtualPersonProperty?(key: string, params: QueryParams): string | null;
}

export interface HogQLContext {
  params: QueryParams;
  fields: HogQLFields;
  /** Where aggregate functions may appear (math_hogql); filters and breakdowns are per event. */
  allowAggregations: boolean;
  /** The project's time zone: what a date-time read from text is in when the query names none (default UTC). */
  timezone?: string;
}

import { HogQLError, type HogQLNode } from './hogql-error';

export { HogQLError, type HogQLNode } from './hogql-error';
type Node = HogQLNode;

export interface HogQLCompiler {
  /** Parses off the main thread within the deadline; a syntax error or a refused shape is a HogQLError. */
  parse(expression: string): Promise<HogQLNode>;
  /** A whole SELECT (or UNION ALL of them), with the characters' offsets kept in `start`/`end`; bounded as parseSelect's constants say. */
  parseSelect(query: string): Promise<HogQLNode>;
  /** Prints a parsed expression as ClickHouse SQL (synchronous: queries are built in one pass). */
  print(ast: HogQLNode, ctx: HogQLContext): string;
  close(): Promise<void>;
}

/**
 * Bounds on what is parsed. PostHog's parser takes time that grows steeply with nesting and with
 * the number of function calls, and overflows its stack on long chains, so an
 * expression is refused past these before parsing, and each parse has a deadline after which
 * its worker is replaced.
 */
export const MAX_HOGQL_LENGTH = 1_000;
export const MAX_HOGQL_NESTING = 6;
export const HOGQL_PARSE_DEADLINE_MS = 1_000;

/**
 * Bounds on a whole query (HogQLQuery). Nesting is what makes the parser slow (a call nested
 * eight deep takes it tens of seconds); the deadline stops what the bound lets through.
 */
export const MAX_SELECT_LENGTH = 20_000;
export const MAX_SELECT_NESTING = 12;
export const SELECT_PARSE_DEADLINE_MS = 3_000;
const MAX_DEPTH = 64;

/**
 * The deepest nesting of ( and [ outside string literals. In a comment (`--`, `//` to the end of
 * the line, or between slash-star and star-slash) opening brackets still count, closing ones
 * and quotes do not, so nothing in a comment can hide the brackets after it: the count errs
 * high, never low.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote: string | null = null;
  let comment: 'line' | 'block' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (comment === 'line' && (c === '\n' || c === '\r')) comment = null;
    else if (comment === 'block' && c === '*' && text[i + 1] === '/') comment = null;
    else if (comment === null && ((c === '-' && text[i + 1] === '-') || (c === '/' && text[i + 1] === '/'))) comment = 'line';
    else if (comment === null && c === '/' && text[i + 1] === '*') comment = 'block';
    else if (comment === null && (c === "'" || c === '"' || c === '`')) quote = c;
    if (c === '(' || c === '[') max = Math.max(max, ++depth);
    else if ((c === ')' || c === ']') && comment === null) depth--;
  }
  return max;
}

const COMPARISONS = table<string>({ '==': '=', '!=': '!=', '<': '<', '<=': '<=', '>': '>', '>=': '>=' });
const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);

const fieldName = (chain: unknown[]) => chain.map(String).join('.').slice(0, 100);

/**
 * An integer constant past 2^53 as the parser wrote it: JSON.parse would round
 * 9223372036854775807 to 9223372036854775808, so the tree is read keeping such digits.
 */
class IntegerText {
  constructor(readonly digits: string) {}
}
const INTEGER = /^-?\d+$/;

/** The type ClickHouse gives an integer literal: the narrowest that holds it. */
function literalIntegerType(value: number): string {
  const bits = [8, 16, 32].find((b) => (value >= 0 ? value < 2 ** b : value >= -(2 ** (b - 1))));
  return `${value >= 0 ? 'UInt' : 'Int'}${bits ?? 64}`;
}
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** The parser's JSON with big integers kept exact (IntegerText) and every other number a number. */
const parseTree = (json: string) =>
  parseJson(json, null, (text) => (INTEGER.test(text) && !Number.isSafeInteger(Number(text)) ? new IntegerText(text) : Number(text))) as Node & {
    error?: boolean;
    message?: string;
  };

/**
 * Parsed texts a compiler keeps: the parser takes ~10 ms for a query of a few hundred characters
 * (more on a busy machine), and the same text comes back (a dashboard's refresh, a saved insight,
 * the SQL page run again). Bounded by the texts' characters (a tree takes some 20 bytes of heap
 * per character of its text: about 5 MB when full) and their number; a failed parse is not kept.
 */
export const PARSE_CACHE_CHARS = 256 * 1024;
const PARSE_CACHE_ENTRIES = 1_000;

/** A parsed tree frozen throughout: trees are shared through the parse cache, so no compile may change one. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The most names a lambda may take, and the deepest lambdas may nest. */
const MAX_LAMBDA_NAMES = 10;

/** Prints an expression tree; the SELECT compiler (select/) extends it with tables, columns and clauses. */
export class Printer implements CallContext {
  readonly aggregates: string[] = [];
  readonly allowAggregations: boolean;
  /** The names of the lambdas being printed, innermost last: a client's name → the generated one printed. */
  private readonly lambdaScopes: Map<string, string>[] = [];
  private lambdaCount = 0;
  private timeZoneParam: string | null = null;
  /** Each property read printed, by its SQL: its JSON column and bound key (see propertyNumber). */
  private readonly propertyReads = new Map<string, { column: string; key: string }>();

  constructor(protected readonly ctx: HogQLContext) {
    this.allowAggregations = ctx.allowAggregations;
  }

  projectTimeZone(): string {
    return (this.timeZoneParam ??= this.ctx.params.add(this.ctx.timezone ?? 'UTC', 'String'));
  }

  isText(node: Node): boolean {
    return (node.node === 'Constant' && typeof node['value'] === 'string' && node['value_type'] !== 'number') || this.isProperty(node);
  }

  /** `(x, y) -> body`, its names printed as generated identifiers so no client text reaches the SQL. */
  lambda(node: Node, depth: number): string {
    const names = node['args'];
    if (!Array.isArray(names) || names.length === 0 || names.length > MAX_LAMBDA_NAMES || names.some((n) => typeof n !== 'string')) {
      throw new HogQLError(`A lambda takes 1 to ${MAX_LAMBDA_NAMES} names.`);
    }
    if (new Set(names).size !== names.length) throw new HogQLError('The names of a lambda must differ.');
    const scope = new Map((names as string[]).map((name) => [name, `__lambda_${this.lambdaCount++}`]));
    this.lambdaScopes.push(scope);
    try {
      const body = this.print(node['expr'] as Node, depth + 1);
      return `(${[...scope.values()].join(', ')}) -> ${body}`;
    } finally {
      this.lambdaScopes.pop();
    }
  }

  /** A call, through the function allow-list (print-call.ts). */
  protected call(node: Node, depth: number): string {
    return printCall(this, node, depth);
  }

  /** The generated name of a lambda's name in scope, innermost first. */
  protected lambdaName(name: string): string | undefined {
    for (let i = this.lambdaScopes.length - 1; i >= 0; i--) {
      const generated = this.lambdaScopes[i]!.get(name);
      if (generated !== undefined) return generated;
    }
    return undefined;
  }

  /** A property read as HogQL does: its text, NULL when missing or JSON null. */
  protected property(column: string, key: string): string {
    const k = this.ctx.params.add(key, 'String');
    const sql = this.propertyText(column, k);
    this.propertyReads.set(sql, { column, key: k });
    return sql;
  }

  /** The text of property `key` (a bound parameter) of the JSON in `column`. */
  protected propertyText(column: string, key: string): string {
    const raw = propertyRawSql(column, key);
    return `if(${raw} IN ('', 'null'), NULL, if(startsWith(${raw}, '"'), JSONExtractString(${raw}), ${raw}))`;
  }

  /**
   * A property read as a number (toFloat, arithmetic, numeric comparison), given the SQL printed
   * for it; null when `node` is no property. The answer is PostHog's for toFloat of its text
   * (accurateCastOrNull(…, 'Float64') over the value unquoted, posthog/hogql/functions/mapping.py):
   * a number, or text that is one, is that number; other text, true/false, null, a missing key
   * and an object or array are NULL. Extracted as a Float64 in one parse of the JSON, rather than
   * as text parsed again (which formats each number as text first: bench:sql "sum of a property"
   * ran 1.24-1.30x the hand-written JSONExtractFloat). The typed extraction reads true and false as
   * 1 and 0, so where it gives 0 or 1 the value's JSON type is looked at (a second parse, of those
   * rows only).
   */
  propertyNumber(node: Node, printed: string): string | null {
    const read = this.isProperty(node) ? this.propertyReads.get(printed) : undefined;
    if (!read) return null;
    const number = `JSONExtract(${read.column}, ${read.key}, 'Nullable(Float64)')`;
    return `if((${number} IN (0, 1)) AND (JSONType(${read.column}, ${read.key}) = 'Bool'), NULL, ${number})`;
  }

  protected isProperty(node: Node): boolean {
    if (node.node === 'Field') {
      const chain = node['chain'] as unknown[];
      return chain[0] === 'properties' || (chain[0] === 'person' && chain[1] === 'properties') || /^group_[0-4]$/.test(String(chain[0]));
    }
    return node.node === 'ArrayAccess' && this.isProperty(node['array'] as Node);
  }

  protected field(chain: unknown[]): string {
    const f = this.ctx.fields;
    const [head, second, third, ...rest] = chain.map(String);
    const extra = rest.length > 0;
    if (chain.length === 1) {
      const lambdaName = this.lambdaName(head!);
      if (lambdaName !== undefined) return lambdaName;
      switch (head) {
        case 'event':
          return f.event;
        case 'timestamp':
          return f.timestamp;
        case 'distinct_id':
          return f.distinct_id;
        case 'person_id':
          return f.person_id;
        case 'elements_chain':
          return f.elements_chain;
      }
      // Materialized from the properties in PostHog's events table (posthog/hogql/database/schema/events.py).
      if (/^\$group_[0-4]$/.test(head!) || head === '$session_id' || head === '$window_id')
        return `JSONExtractString(${f.properties}, ${this.ctx.params.add(head, 'String')})`;
    }
    const column = chain.join('.');
    if (f.columns && Object.hasOwn(f.columns, column)) return f.columns[column]!;
    if (head === 'properties' && second !== undefined && third === undefined) return this.property(f.properties, second);
    if (head === 'person' && second === 'id' && third === undefined) return f.person_id;
    if (head === 'person' && second === 'properties' && third !== undefined && !extra) return this.property(f.person_properties, third);
    if (head === 'person' && second !== undefined && third === undefined) {
      const virtual = f.virtualPersonProperty?.(second, this.ctx.params) ?? null;
      if (virtual !== null) return virtual;
    }
    const group = /^group_([0-4])$/.exec(head ?? '');
    if (group && second === 'properties' && third !== undefined && !extra) return this.property(f.group_properties(Number(group[1])), third);
    throw new HogQLError(
      `Field "${fieldName(chain)}" is not allowed in HogQL expressions here (use ${[
        'event',
        'timestamp',
        'distinct_id',
        'person_id',
        'elements_chain',
        ...Object.keys(f.columns ?? {}),
        '$session_id',
        '$window_id',
        'properties.<key>',
        'person.properties.<key>',
        '$group_N',
        'group_N.properties.<key>',
      ].join(', ')}).`,
    );
  }

  /**
   * An argument of a function call. An integer constant is typed as ClickHouse types the literal
   * (the narrowest of UInt8…UInt64, or Int8…Int64 when negative), as PostHog's printer gets by
   * writing it inline: ClickHouse refuses an Int64 where a function wants a UInt8 mode or size
   * (toStartOfWeek's mode, ngrams' length, position's start, toDateTime64's scale).
   */
  argument(node: Node, depth: number): string {
    const value = node.node === 'Constant' ? node['value'] : undefined;
    if (typeof value === 'number' && Number.isSafeInteger(value)) return this.ctx.params.add(value, literalIntegerType(value));
    return this.print(node, depth);
  }

  protected constant(node: Node): string {
    const value = node['value'];
    if (value === null) return 'NULL';
    if (typeof value === 'boolean') return value ? 'true' : 'false';
    if (value instanceof IntegerText) return this.numberText(value.digits);
    // The parser writes numbers past Int64 (and inf) as text marked as a number.
    if (node['value_type'] === 'number' && typeof value === 'string') return this.numberText(value);
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new HogQLError('Numbers in HogQL expressions must be finite.');
      return Number.isSafeInteger(value) ? this.ctx.params.add(value, 'Int64') : this.ctx.params.add(value, 'Float64');
    }
    if (typeof value === 'string') return this.ctx.params.add(value, 'String');
    throw new HogQLError('Unsupported constant in HogQL expression.');
  }

  /**
   * A number written out in full, typed as ClickHouse types such a literal: Int64 while it fits,
   * then UInt64, then Float64. Bound as text, so no digit is lost on the way.
   */
  private numberText(text: string): string {
    if (INTEGER.test(text)) {
      const integer = BigInt(text);
      if (integer >= INT64_MIN && integer <= INT64_MAX) return this.ctx.params.add(text, 'Int64');
      if (integer >= 0n && integer <= UINT64_MAX) return this.ctx.params.add(text, 'UInt64');
    }
    const number = Number(text);
    if (!Number.isFinite(number)) throw new HogQLError('Numbers in HogQL expressions must be finite.');
    return this.ctx.params.add(number, 'Float64');
  }

  /** A number for arithmetic and numeric comparison: properties are text, read as numbers. */
  numeric(node: Node, depth: number): string {
    const sql = this.print(node, depth);
    if (!this.isProperty(node)) return sql;
    return this.propertyNumber(node, sql) ?? `toFloat64OrNull(${sql})`;
  }

  print(node: Node, depth = 0): string {
    if (depth > MAX_DEPTH) throw new HogQLError(`HogQL expressions may nest at most ${MAX_DEPTH} levels.`);
    const d = depth + 1;
    switch (node.node) {
      case 'Constant':
        return this.constant(node);
      case 'Field':
        return this.field(node['chain'] as unknown[]);
      case 'ArrayAccess': {
        const array = node['array'] as Node;
        const property = node['property'] as Node;
        if (array.node === 'Field' && property.node === 'Constant' && typeof property['value'] === 'string') {
          return this.field([...(array['chain'] as unknown[]), property['value']]);
        }
        return `arrayElement(${this.print(array, d)}, ${this.print(property, d)})`;
      }
      case 'And':
      case 'Or': {
        const parts = (node['exprs'] as Node[]).map((e) => `(${this.print(e, d)})`);
        return `(${parts.join(node.node === 'And' ? ' AND ' : ' OR ')})`;
      }
      case 'Not':
        return `NOT (${this.print(node['expr'] as Node, d)})`;
      case 'Tuple':
        return `tuple(${(node['exprs'] as Node[]).map((e) => this.print(e, d)).join(', ')})`;
      case 'Array':
        return `[${(node['exprs'] as Node[]).map((e) => this.print(e, d)).join(', ')}]`;
      case 'ArithmeticOperation': {
        const op = String(node['op']);
        if (!ARITHMETIC.has(op)) throw new HogQLError(`Operator "${op.slice(0, 10)}" is not allowed in HogQL expressions here.`);
        return `(${this.numeric(node['left'] as Node, d)} ${op} ${this.numeric(node['right'] as Node, d)})`;
      }
      case 'CompareOperation':
        return this.compare(node, d);
      case 'Call':
        return this.call(node, d);
      default:
        throw new HogQLError(`"${String(node.node).slice(0, 40)}" is not allowed in HogQL expressions here.`);
    }
  }

  protected compare(node: Node, depth: number): string {
    const op = String(node['op']);
    const left = node['left'] as Node;
    const right = node['right'] as Node;
    const comparison = COMPARISONS.get(op);
    if (comparison !== undefined) {
      // A property against a number compares numbers, as HogQL's typed comparison does.
      const numericRight = right.node === 'Constant' && typeof right['value'] === 'number';
      const numericLeft = left.node === 'Constant' && typeof left['value'] === 'number';
      const l = numericRight ? this.numeric(left, depth) : this.print(left, depth);
      const r = numericLeft ? this.numeric(right, depth) : this.print(right, depth);
      return `(${l} ${comparison} ${r})`;
    }
    switch (op) {
      case 'like':
      case 'ilike':
      case 'not like':
      case 'not ilike': {
        const sql = `${op.endsWith('ilike') ? 'ilike' : 'like'}(toString(${this.print(left, depth)}), ${this.print(right, depth)})`;
        return op.startsWith('not') ? `NOT ${sql}` : sql;
      }
      case 'in':
      case 'not in': {
        if (right.node !== 'Tuple' && right.node !== 'Array' && right.node !== 'Constant') throw new HogQLError('IN takes a list of values here.');
        const list = right.node === 'Constant' ? `tuple(${this.print(right, depth)})` : this.print(right, depth);
        return `(${this.print(left, depth)} ${op === 'in' ? 'IN' : 'NOT IN'} ${list})`;
      }
      case '=~':
      case '!~':
      case '=~*':
      case '!~*': {
        if (right.node !== 'Constant' || typeof right['value'] !== 'string') throw new HogQLError('A regular expression must be a string constant.');
        const pattern = (op.endsWith('*') ? '(?i)' : '') + right['value'];
        const problem = re2Problem(pattern);
        if (problem) throw new HogQLError(`Invalid regular expression (RE2 syntax): ${problem.slice(0, 200)}`);
        const sql = `match(toString(${this.print(left, depth)}), ${this.ctx.params.add(pattern, 'String')})`;
        return op.startsWith('!') ? `NOT ${sql}` : sql;
      }
      default:
        throw new HogQLError(`Operator "${op.slice(0, 20)}" is not allowed in HogQL expressions here.`);
    }
  }
}

/**
 * A compiler over PostHog's published HogQL parser (@posthog/hogql-parser, a WebAssembly build
 * of the parser PostHog runs), run in a worker thread: the expression becomes PostHog's AST,
 * which is printed to ClickHouse SQL node by node from an allow-list. No text of the expression
 * reaches the SQL except through bound parameters.
 */
export async function createHogQLCompiler(options: { deadlineMs?: number; selectDeadlineMs?: number } = {}): Promise<HogQLCompiler> {
  const { Worker } = await import('node:worker_threads');
  const expressionDeadlineMs = options.deadlineMs ?? HOGQL_PARSE_DEADLINE_MS;
  const selectDeadlineMs = options.selectDeadlineMs ?? SELECT_PARSE_DEADLINE_MS;
  type Pending = Map<number, { resolve: (json: string) => void; reject: (error: Error) => void }>;
  let worker: { thread: InstanceType<typeof Worker>; pending: Pending; ready: Promise<void> } | null = null;
  let nextId = 0;
  const start = () => {
    const thread = new Worker(join(__dirname, 'parser-worker.js'));
    const pending: Pending = new Map();
    let markReady = () => undefined as void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const current = { thread, pending, ready };
    thread.on('message', (message: { id: number; json?: string; error?: string; ready?: boolean }) => {
      if (message.ready) return markReady();
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) waiting?.reject(new HogQLError(`The HogQL expression cannot be parsed: ${message.error.slice(0, 200)}`));
      else waiting?.resolve(message.json!);
    });
    thread.on('error', () => undefined);
    // A worker that ended (terminated past a deadline, or crashed) fails only what it held.
    thread.on('exit', () => {
      markReady();
      if (worker === current) worker = null;
      for (const waiting of pending.values()) waiting.reject(new HogQLError('The HogQL expression cannot be parsed.'));
      pending.clear();
    });
    // After the listeners: adding a 'message' listener refs the worker again. An idle parser must
    // not keep a process from exiting.
    thread.unref();
    return current;
  };
  const parseText = async (text: string, kind: 'expr' | 'select') => {
    const deadlineMs = kind === 'expr' ? expressionDeadlineMs : selectDeadlineMs;
    const current = (worker ??= start());
    // Referenced while a parse is under way (the caller waits on it), unreferenced when idle.
    current.thread.ref();
    const settle = () => {
      if (current.pending.size === 0) current.thread.unref();
    };
    await current.ready;
    return new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        current.pending.delete(id);
        // The parse may never end: replace the worker rather than wait for it.
        if (worker === current) worker = null;
        void current.thread.terminate();
        reject(new HogQLError(`The HogQL ${kind === 'expr' ? 'expression' : 'query'} took longer than ${deadlineMs} ms to parse; simplify it.`));
      }, deadlineMs);
      current.pending.set(id, {
        resolve: (json) => {
          clearTimeout(timer);
          settle();
          resolve(json);
        },
        reject: (error) => {
          clearTimeout(timer);
          settle();
          reject(error);
        },
      });
      current.thread.postMessage({ id, text, kind });
    });
  };
  // Keyed by the kind and the text: an expression and a query of the same text parse differently.
  const parsedTrees = new LRUCache<string, HogQLNode>({ max: PARSE_CACHE_ENTRIES, maxSize: PARSE_CACHE_CHARS, sizeCalculation: (_tree, key) => key.length });
  const cachedParse = async (kind: 'expr' | 'select', text: string, check: (parsed: ReturnType<typeof parseTree>) => void): Promise<HogQLNode> => {
    const key = `${kind}:${text}`;
    const kept = parsedTrees.get(key);
    if (kept) return kept;
    const parsed = parseTree(await parseText(text, kind));
    check(parsed);
    parsedTrees.set(key, deepFreeze(parsed));
    return parsed;
  };
  return {
    async parse(expression) {
      if (typeof expression !== 'string' || expression.trim() === '') throw new HogQLError('The HogQL expression is empty.');
      if (expression.length > MAX_HOGQL_LENGTH) throw new HogQLError(`A HogQL expression may have at most ${MAX_HOGQL_LENGTH} characters.`);
      if (nestingDepth(expression) > MAX_HOGQL_NESTING)
        throw new HogQLError(`A HogQL expression may nest parentheses and brackets at most ${MAX_HOGQL_NESTING} deep.`);
      return cachedParse('expr', expression, (parsed) => {
        if (parsed.error) throw new HogQLError(`Syntax error in HogQL expression: ${String(parsed.message).slice(0, 200)}`);
      });
    },
    async parseSelect(query) {
      if (typeof query !== 'string' || query.trim() === '') throw new HogQLError('The HogQL query is empty.');
      if (query.length > MAX_SELECT_LENGTH) throw new HogQLError(`A HogQL query may have at most ${MAX_SELECT_LENGTH} characters.`);
      if (nestingDepth(query) > MAX_SELECT_NESTING) throw new HogQLError(`A HogQL query may nest parentheses and brackets at most ${MAX_SELECT_NESTING} deep.`);
      return cachedParse('select', query, (parsed) => {
        if (!parsed.error) return;
        const start = (parsed['start'] as { offset?: unknown } | undefined)?.offset;
        const at = typeof start === 'number' ? start : undefined;
        throw new HogQLError(`Syntax error in HogQL query${at === undefined ? '' : ` at ${at}`}: ${String(parsed.message).slice(0, 200)}`, at);
      });
    },
    print(ast, ctx) {
      return new Printer(ctx).print(ast);
    },
    async close() {
      const current = worker;
      worker = null;
      if (current) await current.thread.terminate();
    },
  };
}
