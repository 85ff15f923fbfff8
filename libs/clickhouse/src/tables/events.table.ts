import type { ClickHouseClient } from '@clickhouse/client';
import { toClickHouseDateTime } from '../datetime';
import type { RowBinaryWriter } from './row-binary';
import { insertJsonRows, insertRowBinary } from './table-inserts';

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

const dedupSettings = (token: string | undefined): Record<string, string> => (token ? { insert_deduplication_token: token } : {});

/**
 * One batched insert; callers gather thousands of rows, never one row per insert.
 * `deduplicationToken` (one per batch) makes a retried insert of rows that did land a no-op.
 */
export async function insertEvents(client: ClickHouseClient, rows: readonly EventRow[], options: { deduplicationToken?: string } = {}): Promise<void> {
  await insertJsonRows(client, EVENTS_TABLE, rows, dedupSettings(options.deduplicationToken));
}

/**
 * A JSON object's text as bytes of a buffer, from `start` to the buffer's end (the worker's bus
 * message), with `lastMember` (a `"key":value` JSON text) before its closing brace when set:
 * written into the insert as they are, no string of them made. Its text must be what
 * JSON.stringify writes for the object (events.table.test reads one back).
 */
export interface JsonObjectBytes {
  bytes: Buffer;
  start: number;
  lastMember: string | null;
}

const isJsonObjectBytes = (value: EventValues['properties']): value is JsonObjectBytes => Buffer.isBuffer((value as Partial<JsonObjectBytes>).bytes);

/** The text of JSON object bytes (the in-process engine takes rows as JSON text). */
export function jsonObjectBytesText({ bytes, start, lastMember }: JsonObjectBytes): string {
  const text = bytes.toString('utf8', start);
  if (lastMember === null) return text;
  return text === '{}' ? `{${lastMember}}` : `${text.slice(0, -1)},${lastMember}}`;
}

/**
 * An events row with its times as epoch milliseconds, as the worker builds it: written as
 * RowBinary over HTTP (insertEventValues), as JSONEachRow to the in-process engine.
 */
export interface EventValues {
  uuid: string;
  event: string;
  /** JSON object text, or its bytes, or the object (serialised once, as it is written). */
  properties: string | JsonObjectBytes | Record<string, unknown>;
  /** epoch ms (DateTime64(6): a fraction of a millisecond is kept) */
  timestamp: number;
  team_id: number;
  distinct_id: string;
  elements_chain: string;
  /** epoch ms */
  created_at: number;
  person_id: string;
  /** epoch ms; null for personless events (the column's default, the epoch) */
  person_created_at: number | null;
  person_properties: string;
  person_mode: EventRow['person_mode'];
  /** Attached groups by index (0–4): their properties JSON and creation time (epoch ms). */
  groups: readonly { index: number; propertiesJson: string; createdAtMs: number }[];
}

const PERSON_MODES: Record<EventRow['person_mode'], number> = { full: 0, propertyless: 1, force_upgrade: 2 };
const GROUP_INDEXES = [0, 1, 2, 3, 4] as const;

/** The columns a RowBinary events insert writes, in the order writeEventValues writes them. */
export const EVENT_VALUES_COLUMNS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'team_id',
  'distinct_id',
  'elements_chain',
  'created_at',
  'person_id',
  'person_created_at',
  'person_properties',
  'person_mode',
  ...GROUP_INDEXES.map((n) => `group${n}_properties`),
  ...GROUP_INDEXES.map((n) => `group${n}_created_at`),
] as const;

/** One row in RowBinary, the columns of EVENT_VALUES_COLUMNS (absent groups get the columns' defaults). */
export function writeEventValues(writer: RowBinaryWriter, row: EventValues): void {
  writer.uuid(row.uuid);
  writer.string(row.event);
  const properties = row.properties;
  if (typeof properties === 'string') writer.string(properties);
  else if (isJsonObjectBytes(properties)) writer.jsonObjectBytes(properties.bytes, properties.start, properties.lastMember);
  else writer.string(JSON.stringify(properties));
  writer.dateTime64(row.timestamp, 6);
  writer.int64(row.team_id);
  writer.string(row.distinct_id);
  writer.string(row.elements_chain);
  writer.dateTime64(row.created_at, 6);
  writer.uuid(row.person_id);
  writer.dateTime64(row.person_created_at ?? 0, 3);
  writer.string(row.person_properties);
  writer.int8(PERSON_MODES[row.person_mode]);
  const groups = row.groups;
  // Most events attach no group: five empty strings (a zero length each) and five zero times.
  if (groups.length === 0) {
    writer.zeros(NO_GROUPS_BYTES);
    return;
  }
  for (let n = 0; n < GROUP_INDEXES.length; n++) writer.string(groupAt(groups, n)?.propertiesJson ?? '');
  for (let n = 0; n < GROUP_INDEXES.length; n++) writer.dateTime64(groupAt(groups, n)?.createdAtMs ?? 0, 3);
}

/** The group columns of a row without groups: 5 empty Strings (1 byte each) and 5 DateTime64 zeros (8 bytes each). */
const NO_GROUPS_BYTES = GROUP_INDEXES.length * (1 + 8);

/** The group attached at index n (a loop, not find: no closure per column of every row). */
function groupAt(groups: EventValues['groups'], n: number): EventValues['groups'][number] | undefined {
  for (let i = 0; i < groups.length; i++) if (groups[i]!.index === n) return groups[i];
  return undefined;
}

/** DateTime64(6) text of epoch milliseconds, the fraction of a millisecond rounded as the RowBinary writer does. */
function microsecondText(epochMs: number): string {
  const micros = Math.round(epochMs * 1000);
  const wholeMs = Math.floor(micros / 1000);
  const text = toClickHouseDateTime(wholeMs);
  const rest = micros - wholeMs * 1000;
  return rest === 0 ? text : `${text.slice(0, -3)}${String(rest).padStart(3, '0')}`;
}

/** The JSONEachRow row of the same values (text times), for the in-process engine. */
function eventRowOf(values: EventValues): EventRow {
  const row: EventRow = {
    uuid: values.uuid,
    event: values.event,
    properties: isJsonObjectBytes(values.properties) ? jsonObjectBytesText(values.properties) : values.properties,
    timestamp: microsecondText(values.timestamp),
    team_id: values.team_id,
    distinct_id: values.distinct_id,
    elements_chain: values.elements_chain,
    created_at: microsecondText(values.created_at),
    person_id: values.person_id,
    person_properties: values.person_properties,
    person_mode: values.person_mode,
  };
  if (values.person_created_at !== null) row.person_created_at = toClickHouseDateTime(values.person_created_at);
  for (const group of values.groups) {
    const n = group.index as 0 | 1 | 2 | 3 | 4;
    row[`group${n}_properties`] = group.propertiesJson;
    row[`group${n}_created_at`] = toClickHouseDateTime(group.createdAtMs);
  }
  return row;
}

/**
 * The one insert of a run's event rows, each built by `toValues` as the body is written. Over
 * HTTP the body is RowBinary: no JSON to write here nor to parse in ClickHouse, times as
 * integers, no escaping of the properties text. The in-process engine's connection takes a
 * body as text only, so it gets the same rows as JSONEachRow. `deduplicationToken` as for
 * insertEvents.
 */
export async function insertEventValues<T extends object>(
  client: ClickHouseClient,
  items: readonly T[],
  toValues: (item: T, index: number) => EventValues,
  options: { deduplicationToken?: string } = {},
): Promise<void> {
  await insertRowBinary(client, EVENTS_TABLE, EVENT_VALUES_COLUMNS, items, (writer, item, i) => writeEventValues(writer, toValues(item, i)), {
    toJsonRow: (item, i) => eventRowOf(toValues(item, i)),
    settings: dedupSettings(options.deduplicationToken),
    bytesPerRow: 512,
  });
}
