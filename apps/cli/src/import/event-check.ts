import { createHash } from 'node:crypto';
import { exceedsBusMessageBytes, normalizeEvent, type DropReason } from '@sightline/ingestion';
import { UUID_PATTERN } from '@sightline/json-input';
import type { MappedEvent } from './formats';
import { readSourceTime, type TimeConversion, type TimeSettings } from './source-time';

/** Why a line is not sent; each is counted in the report with its line numbers. */
export type RejectReason =
  | 'invalid_json'
  | 'missing_event'
  | 'missing_distinct_id'
  | 'distinct_id_too_long'
  | 'missing_timestamp'
  | 'invalid_timestamp'
  | 'timestamp_in_future'
  | 'timestamp_out_of_range'
  | 'invalid_properties'
  | 'event_too_large'
  /** The service would drop the event (ingestion's own check, e.g. nested over 64 levels). */
  | DropReason;

/** The event as it goes into a /batch/ body. */
export interface ImportEvent {
  event: string;
  distinct_id: string;
  timestamp: string;
  uuid: string;
  properties: Record<string, unknown>;
}

/** What is known of the run when an event is checked. */
export interface CheckContext {
  times: TimeSettings;
  /** The project key sent with the batches (its length counts towards the bus message). */
  apiKey: string;
  nowMs: number;
}

export type CheckResult =
  | {
      ok: true;
      event: ImportEvent;
      /** The event's JSON, as it goes into the batch body. */
      text: string;
      timeMs: number;
      conversion: TimeConversion | null;
    }
  | { ok: false; reason: RejectReason };

/** The longest client address the gateway may record with an event (IPv4-mapped IPv6), for sizing its bus message. */
const LONGEST_CLIENT_IP = '0000:0000:0000:0000:0000:ffff:255.255.255.255';

/**
 * An id that is the same on every run for the same source event: the source's own UUID, else a
 * name-based UUID (version 5 layout, SHA-1) of the source id or, without one, of the record's
 * own content (`recordText`, its JSON), so the same event gets the same id whether its file is
 * compressed, recompressed or split differently. The service collapses events with the same
 * uuid, so re-sending a batch after a crash or a retry never duplicates it (and two records
 * identical in every field, without an id, are one event).
 */
export function stableEventUuid(sourceId: unknown, recordText: string): string {
  if (typeof sourceId === 'string' && UUID_PATTERN.test(sourceId)) return sourceId.toLowerCase();
  const name = sourceId !== undefined && sourceId !== null && sourceId !== '' ? `id:${String(sourceId)}` : `record:${recordText}`;
  const hash = createHash('sha1').update(`sightline-import:${name}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks a mapped event and builds what is sent, or says why the line is rejected. Besides its
 * own checks (a name, a distinct id, a time read exactly), the event goes through ingestion's
 * own normalizeEvent, as the gateway will run it: an event the service would drop, or whose
 * time or distinct id it would rewrite (clamped to now, set to 1970, cut to 200 characters),
 * or whose bus message would be too large, is rejected here with that reason instead of being
 * counted as imported.
 */
export function checkEvent(mapped: MappedEvent, recordText: () => string, context: CheckContext): CheckResult {
  if (typeof mapped.event !== 'string' || mapped.event.trim() === '') return { ok: false, reason: 'missing_event' };
  const distinctId = typeof mapped.distinct_id === 'number' ? String(mapped.distinct_id) : mapped.distinct_id;
  if (typeof distinctId !== 'string' || distinctId.trim() === '') return { ok: false, reason: 'missing_distinct_id' };
  const time = readSourceTime(mapped.timestamp, context.times);
  if (!time.ok) return { ok: false, reason: time.reason };
  if (!isObject(mapped.properties)) return { ok: false, reason: 'invalid_properties' };
  const properties: Record<string, unknown> = { ...mapped.properties };
  if (mapped.$set !== undefined) properties['$set'] = mapped.$set;
  if (mapped.$set_once !== undefined) properties['$set_once'] = mapped.$set_once;
  const event: ImportEvent = {
    event: mapped.event,
    distinct_id: distinctId,
    timestamp: time.iso,
    uuid: stableEventUuid(mapped.sourceId, mapped.sourceId === undefined || mapped.sourceId === null || mapped.sourceId === '' ? recordText() : ''),
    properties,
  };

  const normalized = normalizeEvent(event, {
    token: context.apiKey,
    teamId: null,
    nowMs: context.nowMs,
    sentAt: null,
    ip: LONGEST_CLIENT_IP,
    historicalMigration: true,
  });
  if (!normalized.ok) return { ok: false, reason: normalized.reason };
  const message = normalized.message;
  if (message.distinct_id !== distinctId) return { ok: false, reason: 'distinct_id_too_long' };
  if (Date.parse(message.timestamp) !== time.ms) return { ok: false, reason: time.ms > context.nowMs ? 'timestamp_in_future' : 'timestamp_out_of_range' };
  if (exceedsBusMessageBytes(message)) return { ok: false, reason: 'event_too_large' };
  // normalizeEvent's `data` is this event with its uuid and distinct id filled in: sent as it is.
  return { ok: true, event, text: JSON.stringify(message.data), timeMs: time.ms, conversion: time.conversion };
}
