import type { ClickHouseClient, ClickHouseSettings, ResultSet } from '@clickhouse/client';
import { analyticsReadContextOf, type QueryOutcome } from './analytics-reads';
import { asQueryLimitError, QueryLimitError } from './query-limits';

/** One analytics read: what it is for, whose data it reads, and its bound SQL. */
export interface ClickhouseQuery {
  /**
   * What the query is for, as a lower-case dotted name (`trends`, `persons.values`): a constant
   * of the code, never input, since it labels the duration histogram.
   */
  kind: string;
  /** The project whose data it reads; null for a query over no one project (system tables). */
  teamId: number | null;
  /** Values only through `params` ({name:Type} placeholders), never pasted into the text. */
  sql: string;
  params?: Record<string, unknown>;
  /** Settings of this query; the limits of a bounded client override the same ones. */
  settings?: ClickHouseSettings;
  /**
   * JSONEachRow (the default): each row an object. JSONCompactEachRowWithNamesAndTypes: each row
   * an array, after a first row of the column names and a second of their types (a HogQL
   * query's columns may repeat a name, and its answer lists their types).
   */
  format?: 'JSONEachRow' | 'JSONCompactEachRowWithNamesAndTypes';
}

const KIND = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

/** Rows parsed between two turns (AnalyticsReadOptions.nextTurn). */
const ROWS_PER_TURN = 5_000;

/**
 * ClickHouse's `log_comment` of a query (system.query_log): its kind and project, as JSON. The
 * kind's shape and an integer project keep it free of quotes and backslashes, which the embedded
 * engine would otherwise have to escape in its SET statement.
 */
export function queryTag(query: Pick<ClickhouseQuery, 'kind' | 'teamId'>): string {
  if (!KIND.test(query.kind)) throw new Error(`query kind ${JSON.stringify(query.kind)} is not a lower-case dotted name`);
  if (query.teamId !== null && !Number.isSafeInteger(query.teamId)) throw new Error(`query team ${String(query.teamId)} is not an integer`);
  return JSON.stringify({ kind: query.kind, team_id: query.teamId });
}

/**
 * Every analytics read goes through here (a test keeps it the only caller of `query`). It tags
 * the query with its kind and project (log_comment), and on a client made by boundAnalyticsReads
 * applies the limits of one query, waits for the read gate, turns a limit's error into a
 * QueryLimitError and times the query by kind. Answers the rows (JSONEachRow).
 */
export async function queryClickhouse<T>(ch: ClickHouseClient, query: ClickhouseQuery): Promise<T[]> {
  const log_comment = queryTag(query);
  const context = analyticsReadContextOf(ch);
  const release = await context?.gate?.acquire();
  const started = performance.now();
  let outcome: QueryOutcome = 'error';
  try {
    let result: ResultSet<'JSONEachRow' | 'JSONCompactEachRowWithNamesAndTypes'>;
    try {
      result = await ch.query({
        query: query.sql,
        query_params: query.params,
        format: query.format ?? 'JSONEachRow',
        clickhouse_settings: { ...query.settings, ...context?.settings, log_comment },
      });
    } finally {
      release?.();
    }
    const rows = await readRows<T>(result, context?.nextTurn);
    outcome = 'ok';
    return rows;
  } catch (error) {
    const mapped = context ? asQueryLimitError(error, context.limits) : error;
    if (mapped instanceof QueryLimitError) outcome = 'limit';
    throw mapped;
  } finally {
    context?.duration?.observe({ kind: query.kind, result: outcome }, (performance.now() - started) / 1000);
  }
}

/**
 * A JSONEachRow (or compact) result's rows, parsed a few thousand at a time with a turn between,
 * where ResultSet.json() would parse a large result (a trend of many buckets and breakdown values)
 * in one go while other requests wait. The text is read whole first: a bounded client's reads
 * wait for the end of the query (wait_end_of_query), so the answer arrives whole anyway, and
 * splitting its lines here costs a third of the client's row stream (a Transform and an async
 * iterator per read).
 */
async function readRows<T>(
  result: ResultSet<'JSONEachRow' | 'JSONCompactEachRowWithNamesAndTypes'>,
  nextTurn: (() => Promise<void>) | undefined,
): Promise<T[]> {
  if (!nextTurn) return (await result.json()) as T[];
  const text = await result.text();
  const rows: T[] = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start) {
      rows.push(JSON.parse(text.slice(start, end)) as T);
      if (rows.length % ROWS_PER_TURN === 0) await nextTurn();
    }
    start = end + 1;
  }
  return rows;
}
