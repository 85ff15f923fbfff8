import { createHash } from 'node:crypto';
import type { MappedEvent } from './formats';

/** Why a line is not sent; each is counted in the report with its line numbers. */
export type RejectReason = 'invalid_json' | 'missing_event' | 'missing_distinct_id' | 'invalid_timestamp' | 'invalid_properties' | 'event_too_large';

/** The event as it goes into a /batch/ body. */
export interface ImportEvent {
  event: string;
  distinct_id: string;
  timestamp: string;
  uuid: string;
  properties: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Well under one bus message (1 MB): one event that large is refused by the service anyway. */
const MAX_EVENT_BYTES = 900_000;

/**
 * An id that is the same on every run for the same source event: the source's own UUID, else a
 * name-based UUID (version 5 layout, SHA-1) of the source id or, without one, of the file's
 * identity and the line. The service collapses events with the same uuid, so re-sending a batch
 * after a crash or a retry never duplicates it.
 */
export function stableEventUuid(sourceId: unknown, fileIdentity: string, line: number): string {
  if (typeof sourceId === 'string' && UUID.test(sourceId)) return sourceId.toLowerCase();
  const name = sourceId !== undefined && sourceId !== null && sourceId !== '' ? `id:${String(sourceId)}` : `${fileIdentity}:${line}`;
  const hash = createHash('sha1').update(`sightline-import:${name}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function timestampOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) {
    // Epoch seconds or milliseconds.
    const ms = value > 1e11 ? value : value * 1000;
    return new Date(ms).toISOString();
  }
  if (typeof value !== 'string' || value.trim() === '') return null;
  const ms = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) * (Number(value) > 1e11 ? 1 : 1000) : Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** Checks a mapped event and builds what is sent, or says why the line is rejected. */
export function checkEvent(mapped: MappedEvent, fileIdentity: string, line: number): { ok: true; event: ImportEvent } | { ok: false; reason: RejectReason } {
  if (typeof mapped.event !== 'string' || mapped.event.trim() === '') return { ok: false, reason: 'missing_event' };
  const distinctId = typeof mapped.distinct_id === 'number' ? String(mapped.distinct_id) : mapped.distinct_id;
  if (typeof distinctId !== 'string' || distinctId.trim() === '') return { ok: false, reason: 'missing_distinct_id' };
  const timestamp = timestampOf(mapped.timestamp);
  if (timestamp === null) return { ok: false, reason: 'invalid_timestamp' };
  if (typeof mapped.properties !== 'object' || mapped.properties === null || Array.isArray(mapped.properties))
    return { ok: false, reason: 'invalid_properties' };
  const properties: Record<string, unknown> = { ...(mapped.properties as Record<string, unknown>) };
  if (mapped.$set !== undefined) properties['$set'] = mapped.$set;
  if (mapped.$set_once !== undefined) properties['$set_once'] = mapped.$set_once;
  const event: ImportEvent = {
    event: mapped.event,
    distinct_id: distinctId,
    timestamp,
    uuid: stableEventUuid(mapped.sourceId, fileIdentity, line),
    properties,
  };
  if (JSON.stringify(event).length > MAX_EVENT_BYTES) return { ok: false, reason: 'event_too_large' };
  return { ok: true, event };
}
