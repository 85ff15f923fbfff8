import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse, QueryLimitError } from '@sightline/clickhouse';
import { compileSelect, createHogQLCompiler, HogQLError, type HogQLCompiler, type PlaceholderValue } from '@sightline/hogql';
import { isJsonObject } from '@sightline/json-input';
import { clickHouseInputError } from '../common/clickhouse-input-errors';
import { dateTimeInZone, isDateTimeType } from '../common/date-time-values';
import { QueryInputError } from '../common/events-sql';

/**
 * Rows a HogQL query answers (posthog/hogql/constants.py): DEFAULT_RETURNED_ROWS when it has no
 * LIMIT, at most MAX_SELECT_RETURNED_ROWS whatever its LIMIT says.
 */
export const DEFAULT_RETURNED_ROWS = 100;
export const MAX_SELECT_RETURNED_ROWS = 50_000;

/** A HogQLQuery node as the query API takes it (PostHog's schema: `query`, `values`). */
export interface HogQLQueryInput {
  query: string;
  values: Record<string, PlaceholderValue>;
}

/** PostHog's HogQLQueryResponse, less the cache fields the query service adds. */
export interface HogQLQueryAnswer {
  columns: string[];
  /** [column name, ClickHouse type] per column. */
  types: [string, string][];
  results: unknown[][];
  hogql: string;
  clickhouse: string;
  hasMore: boolean;
  limit: number;
  offset: number;
}

const MAX_VALUES = 100;

const isPlaceholderValue = (value: unknown): value is PlaceholderValue =>
  value === null ||
  ['string', 'number', 'boolean'].includes(typeof value) ||
  (Array.isArray(value) && value.length <= 1_000 && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v)));

/** A HogQLQuery node checked: its text, and the values of its placeholders. */
export function parseHogQLQueryNode(node: Record<string, unknown>): HogQLQueryInput {
  const query = node['query'];
  if (typeof query !== 'string' || query.trim() === '') throw new QueryInputError('query', 'A HogQLQuery needs `query`, the SELECT to run.', 'required');
  const rawValues = node['values'] ?? {};
  if (!isJsonObject(rawValues)) throw new QueryInputError('values', '`values` must be an object of placeholder names to values.', 'invalid_input');
  const entries = Object.entries(rawValues);
  if (entries.length > MAX_VALUES) throw new QueryInputError('values', `At most ${MAX_VALUES} values may be given.`, 'invalid_input');
  const values: Record<string, PlaceholderValue> = {};
  for (const [name, value] of entries) {
    if (!isPlaceholderValue(value)) {
      throw new QueryInputError(
        'values',
        `The value of ${JSON.stringify(name.slice(0, 60))} must be a text, a number, true/false, null or a list of one of these.`,
        'invalid_input',
      );
    }
    values[name] = value;
  }
  return { query, values };
}

let sharedCompiler: Promise<HogQLCompiler> | null = null;
/** One parser worker for every HogQL query of the process (started on first use). */
const compiler = () => (sharedCompiler ??= createHogQLCompiler());

/**
 * ClickHouse errors that are the server's trouble, not the query's (the engine or network
 * failing, the store missing a table): these stay 5xx. Any other error of a HogQL query is
 * about what the query asks (a type mismatch, an unknown identifier, an aggregate misplaced):
 * the compiler only lets through names and functions it knows, so it is answered as a 400.
 */
const SERVER_FAULTS = new Set([
  3, // UNEXPECTED_END_OF_FILE
  60, // UNKNOWN_TABLE (a store without its migrations)
  81, // UNKNOWN_DATABASE
  76, // CANNOT_OPEN_FILE
  173, // CANNOT_ALLOCATE_MEMORY
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  225, // NO_ZOOKEEPER
  236, // ABORTED
  242, // TABLE_IS_READ_ONLY
  243, // NOT_ENOUGH_SPACE
  252, // TOO_MANY_PARTS
  279, // ALL_CONNECTION_TRIES_FAILED
  394, // QUERY_WAS_CANCELLED
  999, // KEEPER_EXCEPTION
  1000, // POCO_EXCEPTION
  1001, // STD_EXCEPTION
]);

/** A ClickHouse error the query caused, as a 400; anything else as it was. */
function queryError(error: unknown): unknown {
  if (error instanceof QueryLimitError || error instanceof HogQLError) return error;
  const code = Number((error as { code?: unknown } | null)?.code);
  if (!Number.isInteger(code) || code <= 0 || SERVER_FAULTS.has(code)) return error;
  const known = clickHouseInputError(error);
  const type = known?.type ?? String((error as { type?: unknown }).type ?? `code ${code}`).slice(0, 60);
  // ClickHouse's own text is not passed on: it can quote the generated SQL and stored values.
  return new QueryInputError('query', `ClickHouse could not run the query: ${known?.explanation ?? 'it refused it'} (${type}).`, 'query_error');
}

const WIDE_INTEGER = /^U?Int(64|128|256)$/;
const keep = (value: unknown) => value;
/**
 * How a column's values are given in the answer, chosen once per column by its type: a 64-bit
 * integer (which ClickHouse writes as text) a number when it fits a double exactly, a date-time
 * ISO 8601 in the project's time zone, as PostHog answers; any other value as it is.
 */
function columnReader(type: string, timezone: string): (value: unknown) => unknown {
  if (WIDE_INTEGER.test(type.replace(/^(Nullable|LowCardinality)\((.*)\)$/, '$2'))) {
    return (value) => {
      if (typeof value !== 'string') return value;
      const number = Number(value);
      return Number.isSafeInteger(number) ? number : value;
    };
  }
  return isDateTimeType(type) ? (value) => dateTimeInZone(value, type, timezone) : keep;
}

/**
 * Runs a HogQLQuery for one project: parsed off the main thread, compiled to SQL that reads only
 * the project's rows (select-compiler in libs/hogql), run with the limits every analytics read
 * has, one row past the LIMIT asked for so `hasMore` tells there are more.
 */
export async function runHogQLQuery(ch: ClickHouseClient, project: { id: number; timezone: string }, input: HogQLQueryInput): Promise<HogQLQueryAnswer> {
  const teamId = project.id;
  let compiled;
  try {
    const ast = await (await compiler()).parseSelect(input.query);
    compiled = compileSelect(ast, {
      teamId,
      timezone: project.timezone,
      values: input.values,
      text: input.query,
      limits: { default: DEFAULT_RETURNED_ROWS, max: MAX_SELECT_RETURNED_ROWS },
    });
  } catch (error) {
    if (error instanceof HogQLError) throw new QueryInputError('query', error.message, 'invalid_hogql');
    throw error;
  }
  let rows: unknown[][];
  try {
    rows = await queryClickhouse<unknown[]>(ch, {
      kind: 'hogql',
      teamId,
      sql: compiled.sql,
      params: compiled.params,
      format: 'JSONCompactEachRowWithNamesAndTypes',
    });
  } catch (error) {
    throw queryError(error);
  }
  const types = ((rows[1] ?? []) as string[]).map(String);
  const limit = compiled.limit ?? DEFAULT_RETURNED_ROWS;
  const body = rows.slice(2);
  const readers = types.map((type) => columnReader(type, project.timezone));
  const results = body.slice(0, limit).map((row) => row.map((value, i) => (readers[i] ?? keep)(value)));
  return {
    columns: compiled.columns,
    types: compiled.columns.map((name, i) => [name, types[i] ?? 'String']),
    results,
    hogql: input.query,
    clickhouse: compiled.sql,
    hasMore: body.length > limit,
    limit,
    offset: compiled.offset,
  };
}
