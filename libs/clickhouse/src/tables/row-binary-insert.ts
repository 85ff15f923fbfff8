import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { isInProcessStore } from '../analytics-store';
import { insertJsonRows } from './events.table';
import { RowBinaryWriter } from './row-binary';

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
  writeRow: (writer: RowBinaryWriter, item: T) => void,
  toJsonRow?: (item: T) => object,
): Promise<void> {
  if (items.length === 0) return;
  if (isInProcessStore(client)) {
    await insertJsonRows(client, table, items, {}, toJsonRow);
    return;
  }
  const writer = new RowBinaryWriter(items.length * 128);
  for (const item of items) writeRow(writer, item);
  const { stream } = await client.exec({
    query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT RowBinary`,
    values: Readable.from([writer.bytes()]),
  });
  // The answer carries nothing, but its socket is released only once it is read.
  for await (const _ of stream) void _;
}
