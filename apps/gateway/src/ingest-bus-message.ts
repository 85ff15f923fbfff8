import type { BusMessage } from '@sightline/bus';
import { encodeIngestMessage, type IngestMessage } from '@sightline/ingestion';

/**
 * A capture's bus message: the IngestMessage itself (`decoded`) and its bytes (`value`, bus format 2),
 * encoded the first time `value` is read. Kafka reads it when producing; the in-process bus
 * hands `decoded` to the worker and nothing reads `value` unless the event is dead-lettered,
 * so an embedded service never encodes or decodes a message it only passes along.
 */
export class IngestBusMessage implements BusMessage {
  private encoded: Buffer | undefined;

  constructor(
    readonly key: string,
    readonly decoded: IngestMessage,
  ) {}

  get value(): Buffer {
    if (this.encoded === undefined) this.encoded = encodeIngestMessage(this.decoded);
    return this.encoded;
  }
}
