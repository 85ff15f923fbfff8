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
 * and comma, a number, boolean or null at most 24. A nested object gives no bound (Infinity).
 */
export function jsonLengthBound(value: object): number {
  let bound = 2;
  for (const key in value) {
    const field: unknown = (value as Record<string, unknown>)[key];
    bound += 6 * key.length + 4;
    if (typeof field === 'string') bound += 6 * field.length + 2;
    else if (field === null || field === undefined || typeof field === 'number' || typeof field === 'boolean') bound += MAX_NUMBER_JSON_LENGTH;
    else return Infinity;
  }
  return bound;
}

/**
 * Whether the bus message of an event is over MAX_EVENT_MESSAGE_BYTES once encoded. UTF-8
 * takes at most 3 bytes per UTF-16 unit, so only a message whose JSON may be longer than a
 * third of the cap is encoded (by `encode`, which the gateway caches for the bus) to be measured.
 */
export function exceedsBusMessageBytes(message: IngestMessage, encode: () => string = () => JSON.stringify(message)): boolean {
  if (jsonLengthBound(message) * 3 <= MAX_EVENT_MESSAGE_BYTES) return false;
  const value = encode();
  return value.length * 3 > MAX_EVENT_MESSAGE_BYTES && Buffer.byteLength(value) > MAX_EVENT_MESSAGE_BYTES;
}
