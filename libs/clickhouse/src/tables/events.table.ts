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
  /** JSON object text */
  properties: string;
  /** DateTime64 text, see toClickHouseDateTime */
  timestamp: string;
  team_id: number;
  distinct_id: string;
  elements_chain: string;
  created_at: string;
  person_id: string;
  /** DateTime64 text; absent for personless events */
  person_created_at?: string;
  /** JSON object text of the person's properties after this event's updates ('{}' when personless) */
  person_properties: string;
  person_mode: 'full' | 'propertyless' | 'force_upgrade';
};

const GROUP_INDEXES = [0, 1, 2, 3, 4] as const;

/**
 * A JSON-text column's value in a JSONEachRow line: JSON object text goes in as the object it
 * is, which ClickHouse stores in a String column as that very text (the insert sets
 * input_format_json_read_objects_as_strings), so the text is neither escaped here nor unescaped
 * by the server; anything else goes in as a JSON string.
 */
const jsonTextValue = (text: string): string => (text.charCodeAt(0) === 123 /* { */ ? text : JSON.stringify(text));

/**
 * One events row as a JSONEachRow line. Written by hand rather than by JSON.stringify of the
 * row: the row's JSON-text columns are embedded as objects (see jsonTextValue), and the
 * DateTime64 texts, the team id and the person mode never need escaping.
 */
export function eventRowLine(row: EventRow): string {
  let line =
    `{"uuid":${JSON.stringify(row.uuid)},"event":${JSON.stringify(row.event)},"properties":${jsonTextValue(row.properties)}` +
    `,"timestamp":"${row.timestamp}","team_id":${row.team_id},"distinct_id":${JSON.stringify(row.distinct_id)}` +
    `,"elements_chain":${JSON.stringify(row.elements_chain)},"created_at":"${row.created_at}","person_id":${JSON.stringify(row.person_id)}` +
    `,"person_properties":${jsonTextValue(row.person_properties)},"person_mode":"${row.person_mode}"`;
  if (row.person_created_at !== undefined) line += `,"person_created_at":"${row.person_created_at}"`;
  for (const n of GROUP_INDEXES) {
    const properties = row[`group${n}_properties`];
    if (properties !== undefined) line += `,"group${n}_properties":${jsonTextValue(properties)}`;
    const createdAt = row[`group${n}_created_at`];
    if (createdAt !== undefined) line += `,"group${n}_created_at":"${createdAt}"`;
  }
  return `${line}}\n`;
}

/**
 * Inserts a JSONEachRow body built by the caller, in one request. The client's own insert
 * would JSON.stringify every row object again; this sends the text as it is.
 */
export async function insertJsonEachRow(client: ClickHouseClient, table: string, body: string, settings: Record<string, string | number> = {}): Promise<void> {
  if (body.length === 0) return;
  const { stream } = await client.exec({
    query: `INSERT INTO ${table} FORMAT JSONEachRow`,
    values: Readable.from([body]),
    clickhouse_settings: { input_format_json_read_objects_as_strings: 1, ...settings },
  });
  // The answer carries nothing, but the socket is released only once it is read.
  for await (const _ of stream) void _;
}

/**
 * One batched JSONEachRow insert; callers gather thousands of rows, never one row per insert.
 * `deduplicationToken` (one per batch) makes a retried insert of rows that did land a no-op.
 */
export async function insertEvents(client: ClickHouseClient, rows: readonly EventRow[], options: { deduplicationToken?: string } = {}): Promise<void> {
  if (rows.length === 0) return;
  let body = '';
  for (const row of rows) body += eventRowLine(row);
  await insertJsonEachRow(client, EVENTS_TABLE, body, options.deduplicationToken ? { insert_deduplication_token: options.deduplicationToken } : {});
}
