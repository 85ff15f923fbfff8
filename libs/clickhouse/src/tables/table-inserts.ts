import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { inProcessInsertOf, isInProcessStore } from '../analytics-store';
import { RowBinaryWriter } from './row-binary';

/** Rows serialised per chunk: each chunk's row objects are garbage before the next is built. */
const ROWS_PER_CHUNK = 256;

/**
 * One JSON array of the rows `toRow` builds from the items, serialised a chunk at a time: a
 * run's row objects (and their DateTime64 texts) never all exist at once, so the collector
 * finds them dead instead of copying thousands of them into the old generation.
 */
function jsonArrayOf<T>(items: readonly T[], toRow: (item: T, index: number) => object): string {
  const parts: string[] = [];
  for (let start = 0; start < items.length; start += ROWS_PER_CHUNK) {
    const chunk: object[] = [];
    for (let i = start; i < Math.min(start + ROWS_PER_CHUNK, items.length); i++) chunk.push(toRow(items[i]!, i));
    parts.push(JSON.stringify(chunk).slice(1, -1));
  }
  return `[${parts.join(',')}]`;
}

/**
 * Inserts rows as one JSON array, in one request: ClickHouse reads a JSONEachRow body that is
 * an array of row objects. The array is serialised by JSON.stringify (one call per chunk), where
 * the client's own insert serialises row by row and joins the lines. An object in a String
 * column is stored as its JSON text (input_format_json_read_objects_as_strings), exactly the
 * text JSON.stringify gives that object on its own. `toRow` builds each row from its item as
 * the body is written (default: the items are the rows).
 */
export async function insertJsonRows<T extends object>(
  client: ClickHouseClient,
  table: string,
  items: readonly T[],
  settings: Record<string, string | number> = {},
  toRow?: (item: T, index: number) => object,
): Promise<void> {
  if (items.length === 0) return;
  const body = toRow ? jsonArrayOf(items, toRow) : JSON.stringify(items);
  const inProcess = inProcessInsertOf(client);
  if (inProcess) {
    await inProcess({ table, format: 'JSONEachRow', body: Buffer.from(body), settings: { input_format_json_read_objects_as_strings: 1, ...settings } });
    return;
  }
  const { stream } = await client.exec({
    query: `INSERT INTO ${table} FORMAT JSONEachRow`,
    values: Readable.from([body]),
    clickhouse_settings: { input_format_json_read_objects_as_strings: 1, ...settings },
  });
  // The answer carries nothing, but its socket is released only once it is read.
  for await (const _ of stream) void _;
}

/**
 * One insert of `items` into `columns` of `table`. Over HTTP the body is RowBinary, each item
 * written by `writeRow` (no JSON to write here nor to parse in ClickHouse, no escaping of the
 * JSON texts a row carries); the in-process engine's connection takes a body as text only, so
 * it gets the rows `toJsonRow` makes (default: the items), as JSONEachRow.
 */
export async function insertRowBinary<T extends object>(
  client: ClickHouseClient,
  table: string,
  columns: readonly string[],
  items: readonly T[],
  writeRow: (writer: RowBinaryWriter, item: T, index: number) => void,
  options: { toJsonRow?: (item: T, index: number) => object; settings?: Record<string, string | number>; bytesPerRow?: number } = {},
): Promise<void> {
  if (items.length === 0) return;
  if (isInProcessStore(client)) {
    await insertJsonRows(client, table, items, options.settings, options.toJsonRow);
    return;
  }
  const writer = new RowBinaryWriter(items.length * (options.bytesPerRow ?? 128));
  for (let i = 0; i < items.length; i++) writeRow(writer, items[i]!, i);
  const { stream } = await client.exec({
    query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT RowBinary`,
    values: Readable.from([writer.bytes()]),
    ...(options.settings ? { clickhouse_settings: options.settings } : {}),
  });
  // The answer carries nothing, but its socket is released only once it is read.
  for await (const _ of stream) void _;
}
