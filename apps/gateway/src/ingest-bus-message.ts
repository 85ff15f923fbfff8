import type { BusMessage } from '@sightline/bus';
import type { IngestMessage } from '@sightline/ingestion';

/**
 * A capture's bus message: the IngestMessage itself (`decoded`) and its JSON (`value`),
 * encoded the first time `value` is read. Kafka reads it when producing; the in-process bus
 * hands `decoded` to the worker and nothing reads `value` unless the event is dead-lettered,
 * so an embedded service never encodes or decodes a message it only passes along.
 */
export class IngestBusMessage implements BusMessage {
  private encoded: string | undefined;

  constructor(
    readonly key: string,
    readonly decoded: IngestMessage,
  ) {}

  get value(): string {
    if (this.encoded === undefined) this.encoded = JSON.stringify(this.decoded);
    return this.encoded;
  }
}

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
