import type { BatchHandler, EventBus, Topics } from '@sightline/bus';
import { insertEvents, type ClickHouseClient, type EventRow } from '@sightline/clickhouse';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { InvalidMessageError, parseIngestMessage, toEventRow } from './event-row';

export interface EventsConsumerDeps {
  ch: ClickHouseClient;
  bus: EventBus;
  topics: Topics;
  /** Project id for a token; null when no such project exists. Throws when the store is down. */
  resolveTeam: (token: string) => Promise<number | null>;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Turns a batch of bus messages into one ClickHouse insert. Each message ends as a row,
 * a counted drop (unknown project) or a dead letter (can never be parsed); a dependency
 * failure rejects the whole batch, so the bus retries it and commits nothing.
 */
export function createEventsConsumer(deps: EventsConsumerDeps): BatchHandler {
  return async (batch) => {
    const rows: EventRow[] = [];
    const deadLetters: { key: string; value: Buffer; headers: Record<string, string> }[] = [];
    const teams = new Map<string, number | null>();
    for (const message of batch.messages) {
      try {
        const ingest = parseIngestMessage(message.value);
        let teamId = ingest.team_id;
        if (typeof teamId !== 'number') {
          if (!teams.has(ingest.token)) teams.set(ingest.token, await deps.resolveTeam(ingest.token));
          teamId = teams.get(ingest.token) ?? null;
        }
        if (teamId === null) {
          deps.metrics.eventsDropped.inc({ reason: 'unknown_project' });
          continue;
        }
        rows.push(toEventRow(ingest, teamId));
      } catch (error) {
        if (!(error instanceof InvalidMessageError)) throw error;
        deadLetters.push({
          key: message.key ?? '',
          value: message.value,
          headers: {
            ...message.headers,
            'x-original-topic': batch.topic,
            'x-original-partition': String(batch.partition),
            'x-original-offset': message.offset,
            'x-error': error.message.slice(0, 500),
            'x-step': 'parse',
            'x-first-seen-at': new Date().toISOString(),
          },
        });
      }
    }
    await insertEvents(deps.ch, rows);
    if (deadLetters.length > 0) {
      await deps.bus.send(deps.topics.deadLetter, deadLetters);
      deps.metrics.eventsDropped.inc({ reason: 'dead_letter' }, deadLetters.length);
      deps.logger.warn({ topic: batch.topic, count: deadLetters.length }, 'messages dead-lettered');
    }
    deps.metrics.eventsWritten.inc({ topic: batch.topic }, rows.length);
    deps.metrics.consumerBatches.inc({ topic: batch.topic, result: 'ok' });
  };
}
