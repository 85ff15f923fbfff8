import { encodeIngestMessage } from './bus-format';
import type { IngestMessage } from './ingest-message';

/**
 * Largest bus message for one event: Kafka's default `message.max.bytes` (1 MB) less record
 * overhead. One event cannot be split across produce requests, so a bigger one would fail on
 * every retry; PostHog answers such a request 413 ("maximum event size exceeded"). The gateway
 * refuses such a request; `sightline import` checks each event against the same bound first.
 */
export const MAX_EVENT_MESSAGE_BYTES = 1_000_000;

/** The longest JSON text of a number (e.g. -2.2250738585072014e-308) has 24 characters. */
const MAX_NUMBER_JSON_LENGTH = 24;

/**
 * At least the length of JSON.stringify(value), without encoding it: a string's JSON is at
 * most 6 characters per UTF-16 unit (`\uXXXX`) plus its quotes, a key's likewise plus the colon
 * and comma, a number, boolean or null at most 24; nested objects and arrays add their own
 * (the event in a message is one; its depth is bounded before, see exceedsDepth).
 */
export function jsonLengthBound(value: object): number {
  let bound = 2;
  if (Array.isArray(value)) {
    for (const item of value) bound += 1 + fieldBound(item);
    return bound;
  }
  for (const key in value) bound += 6 * key.length + 4 + fieldBound((value as Record<string, unknown>)[key]);
  return bound;
}

function fieldBound(field: unknown): number {
  if (typeof field === 'string') return 6 * field.length + 2;
  if (field === null || field === undefined || typeof field === 'number' || typeof field === 'boolean') return MAX_NUMBER_JSON_LENGTH;
  if (typeof field === 'object') return jsonLengthBound(field);
  return Infinity;
}

/**
 * Whether the bus message of an event is over MAX_EVENT_MESSAGE_BYTES once encoded. UTF-8
 * takes at most 3 bytes per UTF-16 unit, so only a message whose JSON may be longer than a
 * third of the cap is encoded (by `encode`, which the gateway caches for the bus) to be measured.
 */
export function exceedsBusMessageBytes(message: IngestMessage, encode: () => Buffer = () => encodeIngestMessage(message)): boolean {
  // +1: the format's version byte
  if ((jsonLengthBound(message) + 1) * 3 <= MAX_EVENT_MESSAGE_BYTES) return false;
  return encode().length > MAX_EVENT_MESSAGE_BYTES;
}
