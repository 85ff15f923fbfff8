import { busTimeOfBytes, parseBusTime } from './bus-time';
import type { IngestMessage } from './ingest-message';

/**
 * The events topics' message format (docs/data-model.md#bus-messages). Format 2, written now:
 * one version byte (0x02), then the message's fields in a fixed order, each string as its
 * UTF-8 bytes after their length, the event (less its properties) and its properties as two
 * JSON texts, so the worker parses only the properties and writes their text into the insert
 * untouched. Format 1: the version byte 0x01, then the IngestMessage as UTF-8 JSON with the
 * event in `data` as a nested object. Format 0, the oldest: the JSON alone, `data` holding the
 * event's JSON text. JSON never starts with a byte below 0x09, so messages already in a topic
 * (or replayed from the dead letters) in any of them still decode.
 */
export const BUS_FORMAT_VERSION = 2;
const FORMAT_NESTED_JSON = 1;
const FIRST_JSON_BYTE = 0x09;

// Format 2's flags byte.
const HISTORICAL = 1;
const HAS_TEAM = 2;
const HAS_IP = 4;
const HAS_SENT_AT = 8;
/** Every plain string is ASCII: they are read with one latin1 decode of their bytes. */
const ASCII_STRINGS = 16;
/** The event has a top-level `$set` or `$set_once`: the only part of it, besides its properties, that the worker reads. */
const TOP_LEVEL_UPDATES = 32;
/** The plain strings, then the event's JSON (less its properties); the properties' JSON runs to the end. */
const FIELDS = 9;
/** Version byte, flags byte, team id (Int32 LE), each field's byte length (UInt32 LE). */
const HEADER_BYTES = 6 + 4 * FIELDS;

/**
 * The JSON of the event less its properties: JSON.stringify leaves out a key whose value is
 * undefined, so the key is set so for the call and put back (synchronously: nothing else sees
 * the object meanwhile), where a copy of the event without it cost a third of the encode.
 */
function eventJsonWithoutProperties(data: Record<string, unknown>): string {
  if (!('properties' in data)) return JSON.stringify(data);
  const properties = data['properties'];
  data['properties'] = undefined;
  try {
    return JSON.stringify(data);
  } finally {
    data['properties'] = properties;
  }
}

/** The bus message bytes of an IngestMessage (format 2). */
export function encodeIngestMessage(message: IngestMessage): Buffer {
  const data = typeof message.data === 'string' ? (JSON.parse(message.data) as Record<string, unknown>) : message.data;
  const sent = data['properties'];
  const propertiesJson = sent === undefined ? '{}' : JSON.stringify(sent);
  const eventJson = eventJsonWithoutProperties(data);
  const { uuid, distinct_id: distinctId, now, token, event, timestamp } = message;
  const ip = message.ip ?? '';
  const sentAt = message.sent_at ?? '';
  // Written with one call: most messages are ASCII throughout, and then each field's length in
  // bytes is its length in characters (a check on the total tells).
  const text = uuid + distinctId + ip + now + sentAt + token + event + timestamp + eventJson + propertiesJson;
  const bytes = Buffer.byteLength(text, 'utf8');
  const value = Buffer.allocUnsafe(HEADER_BYTES + bytes);
  value.write(text, HEADER_BYTES, 'utf8');
  const ascii = bytes === text.length;
  const lengthOf = ascii ? (field: string) => field.length : (field: string) => Buffer.byteLength(field, 'utf8');
  value.writeUInt32LE(lengthOf(uuid), 6);
  value.writeUInt32LE(lengthOf(distinctId), 10);
  value.writeUInt32LE(lengthOf(ip), 14);
  value.writeUInt32LE(lengthOf(now), 18);
  value.writeUInt32LE(lengthOf(sentAt), 22);
  value.writeUInt32LE(lengthOf(token), 26);
  value.writeUInt32LE(lengthOf(event), 30);
  value.writeUInt32LE(lengthOf(timestamp), 34);
  value.writeUInt32LE(lengthOf(eventJson), 38);
  const plainAscii = ascii || [uuid, distinctId, ip, now, sentAt, token, event, timestamp].every((field) => Buffer.byteLength(field, 'utf8') === field.length);
  value[0] = BUS_FORMAT_VERSION;
  value[1] =
    (message.historical_migration ? HISTORICAL : 0) |
    (message.team_id === null ? 0 : HAS_TEAM) |
    (message.ip === null ? 0 : HAS_IP) |
    (message.sent_at === null ? 0 : HAS_SENT_AT) |
    (plainAscii ? ASCII_STRINGS : 0) |
    (data['$set'] !== undefined || data['$set_once'] !== undefined ? TOP_LEVEL_UPDATES : 0);
  // Project ids are PostgreSQL serials (int4).
  value.writeInt32LE(message.team_id ?? 0, 2);
  return value;
}

/**
 * A bus value as the worker reads it: the message (unchecked), and for format 2 where the
 * properties' JSON text starts (it runs to the value's end; -1 in formats 0 and 1): the worker
 * copies those bytes into the insert instead of keeping a string of them. `message.data` of
 * format 2 holds the properties and, when the event has them, its top-level `$set` /
 * `$set_once` (the rest of the event is not parsed: the worker reads nothing else of it).
 * `jsonClean`: no JSON text of the value holds a `\u` escape (holdsNoUnicodeEscape), so no
 * string parsed from JSON holds a NUL or a lone surrogate; format 2's plain strings (distinct
 * id, event name, ...) are not covered and are checked on their own.
 */
export interface DecodedBusValue {
  message: unknown;
  format: 0 | 1 | 2;
  propertiesStart: number;
  jsonClean: boolean;
  /**
   * Format 2: parseBusTime of its `timestamp` and `now`, read once here (from the bytes when
   * they have toISOString's shape); null in formats 0 and 1, whose fields are checked first.
   */
  timestampMs: number | null;
  nowMs: number | null;
}

const truncated = () => new Error('bus message format 2 is truncated');

/**
 * A format-2 time field: read from its bytes when it has toISOString's shape (parseBusTime's
 * answer without making a string of it), else from its text.
 */
const busTimeOf = (value: Buffer, start: number, end: number, text: string) => busTimeOfBytes(value, start, end) ?? parseBusTime(text);

/**
 * Where format 2's fields end in a value (each field starts where the previous one ends, the
 * first at FORMAT2_HEADER_BYTES), with its flags (FORMAT2_FLAGS) and team id: the header read
 * without decoding any field. Filled in place by readFormat2Layout, so a caller reading many
 * values reuses one.
 */
export interface Format2Layout {
  flags: number;
  /** The team id as written (0 when the flags say there is none). */
  teamId: number;
  uuidEnd: number;
  distinctIdEnd: number;
  ipEnd: number;
  nowEnd: number;
  sentAtEnd: number;
  tokenEnd: number;
  eventEnd: number;
  timestampEnd: number;
  /** Where the properties' JSON starts; it runs to the value's end. */
  propertiesStart: number;
}

/** Format 2's flags byte, for readers of its layout. */
export const FORMAT2_FLAGS = { HISTORICAL, HAS_TEAM, HAS_IP, HAS_SENT_AT, ASCII_STRINGS, TOP_LEVEL_UPDATES } as const;
export const FORMAT2_HEADER_BYTES = HEADER_BYTES;

export const newFormat2Layout = (): Format2Layout => ({
  flags: 0,
  teamId: 0,
  uuidEnd: 0,
  distinctIdEnd: 0,
  ipEnd: 0,
  nowEnd: 0,
  sentAtEnd: 0,
  tokenEnd: 0,
  eventEnd: 0,
  timestampEnd: 0,
  propertiesStart: 0,
});

/** Fills `into` with a format-2 value's layout; throws when the value is truncated (the version byte is not checked). */
export function readFormat2Layout(value: Buffer, into: Format2Layout): void {
  if (value.length < HEADER_BYTES) throw truncated();
  into.flags = value[1]!;
  into.teamId = value.readInt32LE(2);
  // In the order encodeIngestMessage writes them.
  const uuidEnd = (into.uuidEnd = HEADER_BYTES + value.readUInt32LE(6));
  const distinctIdEnd = (into.distinctIdEnd = uuidEnd + value.readUInt32LE(10));
  const ipEnd = (into.ipEnd = distinctIdEnd + value.readUInt32LE(14));
  const nowEnd = (into.nowEnd = ipEnd + value.readUInt32LE(18));
  const sentAtEnd = (into.sentAtEnd = nowEnd + value.readUInt32LE(22));
  const tokenEnd = (into.tokenEnd = sentAtEnd + value.readUInt32LE(26));
  const eventEnd = (into.eventEnd = tokenEnd + value.readUInt32LE(30));
  const timestampEnd = (into.timestampEnd = eventEnd + value.readUInt32LE(34));
  const propertiesStart = (into.propertiesStart = timestampEnd + value.readUInt32LE(38));
  if (propertiesStart > value.length) throw truncated();
}

/** readFormat2's layout (it runs synchronously: one serves every call). */
const layout = newFormat2Layout();

/** Format 2's fields (see encodeIngestMessage); `full`: the whole event is parsed, not only what the worker reads. */
function readFormat2(value: Buffer, full: boolean): DecodedBusValue {
  readFormat2Layout(value, layout);
  const { flags, uuidEnd, distinctIdEnd, ipEnd, nowEnd, sentAtEnd, tokenEnd, eventEnd, timestampEnd, propertiesStart } = layout;
  let uuid: string, distinctId: string, ip: string, now: string, sentAt: string, token: string, event: string, timestamp: string;
  if (flags & ASCII_STRINGS) {
    // The uuid is read on its own: a substring of 13 characters or more keeps the whole text
    // alive, and the uuid lives on with the event until its insert.
    uuid = value.toString('latin1', HEADER_BYTES, uuidEnd);
    // One decode for the rest, cut up as text (ASCII: one character per byte).
    const text = value.toString('latin1', uuidEnd, timestampEnd);
    distinctId = text.substring(0, distinctIdEnd - uuidEnd);
    ip = text.substring(distinctIdEnd - uuidEnd, ipEnd - uuidEnd);
    now = text.substring(ipEnd - uuidEnd, nowEnd - uuidEnd);
    sentAt = text.substring(nowEnd - uuidEnd, sentAtEnd - uuidEnd);
    token = text.substring(sentAtEnd - uuidEnd, tokenEnd - uuidEnd);
    event = text.substring(tokenEnd - uuidEnd, eventEnd - uuidEnd);
    timestamp = text.substring(eventEnd - uuidEnd);
  } else {
    uuid = value.toString('utf8', HEADER_BYTES, uuidEnd);
    distinctId = value.toString('utf8', uuidEnd, distinctIdEnd);
    ip = value.toString('utf8', distinctIdEnd, ipEnd);
    now = value.toString('utf8', ipEnd, nowEnd);
    sentAt = value.toString('utf8', nowEnd, sentAtEnd);
    token = value.toString('utf8', sentAtEnd, tokenEnd);
    event = value.toString('utf8', tokenEnd, eventEnd);
    timestamp = value.toString('utf8', eventEnd, timestampEnd);
  }
  const properties: unknown = JSON.parse(value.toString('utf8', propertiesStart));
  let data: Record<string, unknown>;
  if (full || flags & TOP_LEVEL_UPDATES) {
    const parsed: unknown = JSON.parse(value.toString('utf8', timestampEnd, propertiesStart));
    data = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } else data = {};
  data['properties'] = properties;
  const message: IngestMessage = {
    uuid,
    distinct_id: distinctId,
    ip: flags & HAS_IP ? ip : null,
    data,
    now,
    sent_at: flags & HAS_SENT_AT ? sentAt : null,
    token,
    team_id: flags & HAS_TEAM ? layout.teamId : null,
    event,
    timestamp,
    historical_migration: (flags & HISTORICAL) !== 0,
  };
  return {
    message,
    format: 2,
    propertiesStart,
    jsonClean: holdsNoUnicodeEscape(value, timestampEnd),
    timestampMs: busTimeOf(value, eventEnd, timestampEnd, timestamp),
    nowMs: busTimeOf(value, ipEnd, nowEnd, now),
  };
}

/**
 * A bus value as the worker reads it (any format; see DecodedBusValue); throws on an unknown
 * version, a truncated format-2 value or bad JSON (a SyntaxError).
 */
export function decodeBusValue(value: Buffer): DecodedBusValue {
  const first = value[0];
  if (first === BUS_FORMAT_VERSION) return readFormat2(value, false);
  if (first === FORMAT_NESTED_JSON)
    return {
      message: JSON.parse(value.toString('utf8', 1)),
      format: 1,
      propertiesStart: -1,
      jsonClean: holdsNoUnicodeEscape(value),
      timestampMs: null,
      nowMs: null,
    };
  // Bytes below a tab never start JSON text: they are kept for versions to come.
  if (first !== undefined && first < FIRST_JSON_BYTE) throw new Error(`unknown bus message format ${first}`);
  return {
    message: JSON.parse(value.toString('utf8')),
    format: 0,
    propertiesStart: -1,
    jsonClean: holdsNoUnicodeEscape(value),
    timestampMs: null,
    nowMs: null,
  };
}

/** The whole message a bus value holds, unchecked (any format, the event in full); throws as decodeBusValue. */
export function decodeIngestMessage(value: Buffer): unknown {
  return value[0] === BUS_FORMAT_VERSION ? readFormat2(value, true).message : decodeBusValue(value).message;
}

/**
 * The message of a bus value as JSON text (format 0/1's JSON, format 2 re-encoded as format 1's
 * JSON), for people to read: the dead-letter archive stores it.
 */
export function busValueText(value: Buffer): string {
  if (value[0] !== BUS_FORMAT_VERSION) return value.toString('utf8');
  try {
    return JSON.stringify(decodeIngestMessage(value));
  } catch {
    return value.toString('utf8');
  }
}

const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

/**
 * Whether no string of the JSON in a bus value from `start` on (formats 0 and 1: the whole
 * message, keys included) can contain a NUL or a lone surrogate, found by searching its bytes:
 * JSON writes both only as `\u` escapes (a raw control character is not JSON, and a surrogate's
 * UTF-8 bytes decode as U+FFFD), and in format 0 the inner text's escapes are escaped again,
 * still `\u`. False says only "maybe".
 */
export function holdsNoUnicodeEscape(value: Buffer, start = 0): boolean {
  // A byte search (memchr) per backslash: most messages hold none, and it is several times
  // faster than searching for the two-byte sequence.
  for (let at = value.indexOf(BACKSLASH, start); at !== -1; at = value.indexOf(BACKSLASH, at + 1)) if (value[at + 1] === LETTER_U) return false;
  return true;
}
