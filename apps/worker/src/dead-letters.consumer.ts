import type { BatchHandler } from '@sightline/bus';
import { insertDeadLetters, type ClickHouseClient } from '@sightline/clickhouse';
import { busValueText } from '@sightline/ingestion';

/** Archives the dead-letter topic into ClickHouse (`dead_letters`) for inspection and replay. */
export function createDeadLettersConsumer(ch: ClickHouseClient): BatchHandler {
  return async (batch) => {
    await insertDeadLetters(
      ch,
      batch.messages.map((m) => ({
        topic: m.headers['x-original-topic'] ?? batch.topic,
        partition: Number(m.headers['x-original-partition'] ?? batch.partition),
        offset: m.headers['x-original-offset'] ?? m.offset,
        key: m.key ?? '',
        // Text people can read: a binary (format 2) message is stored as its JSON.
        value: busValueText(m.value),
        headers: m.headers,
        error: m.headers['x-error'] ?? '',
      })),
    );
  };
}
