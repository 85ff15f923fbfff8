import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';

export const EVENTS_TABLE = 'events';

/** The properties and creation time of the group attached at index N (docs/data-model.md#groups). */
export type EventGroupColumns = {
  [N in 0 | 1 | 2 | 3 | 4 as `group${N}_properties`]?: string;
} & {
  [N in 0 | 1 | 2 | 3 | 4 as `group${N}_created_at`]?: string;
};

export type EventRow = EventGroupColumns & {
  uuid: string;
  event: string;
  /**
   * JSON object text, or the object itself: then it is serialised once, into the insert body
   * (the worker hands its parsed properties over instead of serialising them first).
   */
  properties: string | Record<string, unknown>;
  /** DateTime64 text, see toClickHouseDateTime */
  timestamp: string;
  team_id: number;
  distinct_id: string;
  elements_chain: string;
  created_at: string;
  person_id: string;
  /** DateTime64 text; absent for personless events */
  person_created_at?: string;
  /** JSON text of the person's properties after this event's updates ('{}' when personless) */
  person_properties: string;
  person_mode: 'full' | 'propertyless' | 'force_upgrade';
};

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
  const { stream } = await client.exec({
    query: `INSERT INTO ${table} FORMAT JSONEachRow`,
    values: Readable.from([toRow ? jsonArrayOf(items, toRow) : JSON.stringify(items)]),
    clickhouse_settings: { input_format_json_read_objects_as_strings: 1, ...settings },
  });
  // The answer carries nothing, but its socket is released only once it is read.
  for await (const _ of stream) void _;
}

const dedupSettings = (token: string | undefined): Record<string, string> => (token ? { insert_deduplication_token: token } : {});

/**
 * One batched insert; callers gather thousands of rows, never one row per insert.
 * `deduplicationToken` (one per batch) makes a retried insert of rows that did land a no-op.
 */
export async function insertEvents(client: ClickHouseClient, rows: readonly EventRow[], options: { deduplicationToken?: string } = {}): Promise<void> {
  await insertJsonRows(client, EVENTS_TABLE, rows, dedupSettings(options.deduplicationToken));
}

/** insertEvents of the rows `toRow` builds from the items, each built only as the body is written. */
export async function insertEventsOf<T extends object>(
  client: ClickHouseClient,
  items: readonly T[],
  toRow: (item: T, index: number) => EventRow,
  options: { deduplicationToken?: string } = {},
): Promise<void> {
  await insertJsonRows(client, EVENTS_TABLE, items, dedupSettings(options.deduplicationToken), toRow);
}
