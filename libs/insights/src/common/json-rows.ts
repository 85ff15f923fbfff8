import { nextWorkTurn } from '@sightline/http';
import type { ResultSet } from '@clickhouse/client';

/** Rows parsed between two turns of the event loop. */
const ROWS_PER_TURN = 5_000;

/**
 * The rows of a JSONEachRow result, parsed a few thousand at a time with a turn of the event
 * loop between: a large result (a trend of many buckets and breakdown values) is read while
 * other requests are served, where ResultSet.json() parses all of it in one go.
 */
export async function jsonRows<T>(result: ResultSet<'JSONEachRow'>): Promise<T[]> {
  const rows: T[] = [];
  for await (const batch of result.stream<T>()) {
    for (const row of batch) {
      rows.push(row.json());
      if (rows.length % ROWS_PER_TURN === 0) await nextWorkTurn();
    }
  }
  return rows;
}
