import { hash } from 'node:crypto';
import { parse as parseUuid, v7 as uuidv7, validate as isUuid } from 'uuid';
import { computeTimestamp } from './timestamp';
import type { RawEvent } from './capture-payload';
import { exceedsDepth } from '@sightline/json-input';
import { eventShapeProblem, type DropReason } from './event-schema';

/** What the gateway puts on the bus (PostHog's capture message, plus the resolved team). */
export interface IngestMessage {
  uuid: string;
  distinct_id: string;
  ip: string | null;
  /**
   * The event as the client sent it, with uuid and distinct_id filled in: the object itself;
   * its JSON text in messages written in bus format 0 (bus-format.ts).
   */
  data: Record<string, unknown> | string;
  now: string;
  sent_at: string | null;
  token: string;
  /** null when the key store was unreachable at the gateway (fail-open); the worker resolves it. */
  team_id: number | null;
  event: string;
  timestamp: string;
  historical_migration: boolean;
}

export type NormalizeResult = { ok: true; key: string; message: IngestMessage } | { ok: false; reason: DropReason };

const MAX_DISTINCT_ID_LENGTH = 200;

/** Person ids derive from the distinct id (PostHog: UUIDv5 in this namespace over "team:distinct_id"). */
export const PERSON_UUID_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22';
/** The namespace's bytes, followed in a scratch buffer by each name's UTF-8 bytes. */
const PERSON_UUID_NAMESPACE_BYTES = Buffer.from(parseUuid(PERSON_UUID_NAMESPACE));
let nameScratch = Buffer.alloc(512);
PERSON_UUID_NAMESPACE_BYTES.copy(nameScratch);
/** The variant character of a v5 uuid for each hex digit of the hash at that place (10xx). */
const VARIANT_HEX = '89ab89ab89ab89ab';

/**
 * UUIDv5 (RFC 9562) of `${teamId}:${distinctId}` in the person namespace. The worker derives one
 * per personless event and per new person, so it is computed with one native SHA-1 call over a
 * reused buffer (the uuid package's v5 builds a hash object, arrays and the text per call, which
 * cost a few microseconds each time); ingest-message.test checks it against that package.
 */
export function personUuidFor(teamId: number, distinctId: string): string {
  const name = `${teamId}:${distinctId}`;
  const needed = 16 + Buffer.byteLength(name, 'utf8');
  if (needed > nameScratch.length) {
    nameScratch = Buffer.alloc(needed * 2);
    PERSON_UUID_NAMESPACE_BYTES.copy(nameScratch);
  }
  nameScratch.write(name, 16, 'utf8');
  const h = hash('sha1', nameScratch.subarray(0, needed), 'hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${VARIANT_HEX[parseInt(h[16]!, 16)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Strings stay; numbers, arrays and objects become compact JSON; missing/null is absent. */
function readDistinctId(e: RawEvent): string | null {
  let value: unknown = e.distinct_id ?? e.$distinct_id;
  if (value === undefined || value === null) {
    const props = e.properties as Record<string, unknown> | undefined;
    value = typeof props === 'object' && props !== null ? props['distinct_id'] : undefined;
  }
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.slice(0, MAX_DISTINCT_ID_LENGTH);
}

export interface NormalizeContext {
  token: string;
  teamId: number | null;
  nowMs: number;
  sentAt: string | null;
  ip: string | null;
  historicalMigration: boolean;
}

/**
 * The ISO text of the request's time, the last one kept: a batch's events share it (an event
 * without a timestamp has it as its own too), and the text cost an eighth of an event's
 * normalisation.
 */
let lastIsoMs = NaN;
let lastIsoText = '';
function isoTextOf(ms: number): string {
  if (ms !== lastIsoMs) {
    lastIsoText = new Date(ms).toISOString();
    lastIsoMs = ms;
  }
  return lastIsoText;
}

/**
 * The event with uuid, distinct_id and properties set, keys in the order the client sent them
 * (new ones last), as `{ ...raw, uuid, distinct_id, properties }` would build it. That literal
 * costs ~0.8 µs per event in V8 (a spread followed by new keys takes a slow path); a copy by
 * Object.assign then three assignments ~0.05. Object.assign would turn an own `__proto__` key
 * (JSON.parse makes one) into the copy's prototype, so such an event takes the spread.
 */
function eventData(raw: RawEvent, uuid: string, distinctId: string, properties: Record<string, unknown>): Record<string, unknown> {
  if (Object.hasOwn(raw, '__proto__')) return { ...raw, uuid, distinct_id: distinctId, properties };
  const data: Record<string, unknown> = Object.assign({}, raw);
  data['uuid'] = uuid;
  data['distinct_id'] = distinctId;
  data['properties'] = properties;
  return data;
}

/** Events PostHog tags as sent by its own services record the loopback address (rust/capture/src/v0_request.rs). */
const INTERNAL_CAPTURE_IP = '127.0.0.1';

/**
 * Validates one event (ajv shape, then the distinct id) and builds its bus message, or says
 * why it is dropped. Illegal distinct ids (`anonymous`, `null`, …) are kept: capture stores
 * them and only merges refuse them (docs/data-model.md#distinct-ids).
 */
export function normalizeEvent(input: unknown, ctx: NormalizeContext): NormalizeResult {
  const problem = eventShapeProblem(input);
  if (problem !== null) return { ok: false, reason: problem };
  // Serialising the event, here and in the worker, recurses into every value: a value nested
  // thousands of levels deep would overflow the stack. Such an event is dropped, not the request.
  if (exceedsDepth(input)) return { ok: false, reason: 'nested_too_deeply' };
  const raw = input as RawEvent & { event: string };
  const distinctId = readDistinctId(raw);
  if (distinctId === null) return { ok: false, reason: 'missing_distinct_id' };
  if (distinctId.trim() === '') return { ok: false, reason: 'empty_distinct_id' };

  const properties = (raw.properties as Record<string, unknown> | null | undefined) ?? {};
  const uuid = typeof raw.uuid === 'string' && isUuid(raw.uuid) ? raw.uuid.toLowerCase() : uuidv7();
  const sentAt = ctx.sentAt ?? (typeof raw.sent_at === 'string' ? raw.sent_at : null);
  const timestampMs = computeTimestamp({
    timestamp: raw.timestamp,
    offset: raw.offset,
    sentAt,
    nowMs: ctx.nowMs,
    ignoreSentAt: properties['$ignore_sent_at'] === true,
  });
  const now = isoTextOf(ctx.nowMs);
  return {
    ok: true,
    key: `${ctx.token}:${distinctId}`,
    message: {
      uuid,
      distinct_id: distinctId,
      ip: properties['capture_internal'] === true ? INTERNAL_CAPTURE_IP : ctx.ip,
      data: eventData(raw, uuid, distinctId, properties),
      now,
      sent_at: sentAt,
      token: ctx.token,
      team_id: ctx.teamId,
      event: raw.event,
      timestamp: timestampMs === ctx.nowMs ? now : new Date(timestampMs).toISOString(),
      historical_migration: ctx.historicalMigration,
    },
  };
}
