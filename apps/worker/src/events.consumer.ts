import { createHash } from 'node:crypto';
import type { BatchHandler, ConsumedBatch, ConsumedMessage, EventBus, Topics } from '@sightline/bus';
import { insertEvents, type ClickHouseClient } from '@sightline/clickhouse';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { GroupTypeIndexes, PersonlessDistinctIdCache, writeCopies } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { alwaysAnOutage, isClickHouseOutage, isPostgresOutage } from './pipeline/dependency-errors';
import { toEventRow } from './pipeline/event-row';
import { normalizeStep, type PreparedEvent } from './pipeline/normalize.step';
import { parseStep } from './pipeline/parse.step';
import { personsStep } from './pipeline/persons.step';
import { runStep, StepError, type StepResult } from './pipeline/step-result';

export interface EventsConsumerDeps {
  ch: ClickHouseClient;
  db: MetadataStore;
  bus: EventBus;
  topics: Topics;
  /** Project id for a token; null when no such project exists. Throws when the store is down. */
  resolveTeam: (token: string) => Promise<number | null>;
  metrics: Metrics;
  logger: Logger;
}

interface DeadLetter {
  message: ConsumedMessage;
  step: string;
  error: string;
}

/**
 * The events pipeline for one consumed batch (one partition, in offset order):
 * per message parse → team → normalize (each ok / drop / dead-letter), then for the batch
 * persons & groups (one Postgres transaction), then one ClickHouse insert of the rows and
 * the person/group copies, then the dead letters. Resolving lets the bus commit the batch.
 *
 * A dependency outage rejects the batch: the bus retries it with backoff and commits
 * nothing. Any other batch failure means some message can never succeed; the batch is
 * then replayed one message at a time and the failing ones are dead-lettered.
 */
export function createEventsConsumer(deps: EventsConsumerDeps): BatchHandler {
  const groupTypes = new GroupTypeIndexes(deps.db);
  const personlessCache = new PersonlessDistinctIdCache();

  async function prepare(messages: readonly ConsumedMessage[]) {
    const prepared: { message: ConsumedMessage; event: PreparedEvent }[] = [];
    const deadLetters: DeadLetter[] = [];
    const teams = new Map<string, number | null>();
    const settle = <T>(message: ConsumedMessage, step: string, result: StepResult<T>): T | undefined => {
      if (result.kind === 'ok') return result.value;
      if (result.kind === 'drop') deps.metrics.eventsDropped.inc({ reason: result.reason });
      else deadLetters.push({ message, step, error: result.error });
      return undefined;
    };
    for (const message of messages) {
      const ingest = settle(message, 'parse', parseStep(message.value));
      if (!ingest) continue;
      let teamId = ingest.team_id;
      if (typeof teamId !== 'number') {
        if (!teams.has(ingest.token)) {
          const resolved = await runStep('team', alwaysAnOutage, () => deps.resolveTeam(ingest.token));
          teams.set(ingest.token, resolved);
        }
        teamId = teams.get(ingest.token) ?? null;
      }
      if (teamId === null) {
        deps.metrics.eventsDropped.inc({ reason: 'unknown_project' });
        continue;
      }
      const event = settle(message, 'normalize', normalizeStep(ingest, teamId));
      if (event) prepared.push({ message, event });
    }
    return { prepared, deadLetters };
  }

  async function sendDeadLetters(batch: ConsumedBatch, letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await runStep('dead-letter', alwaysAnOutage, () =>
      deps.bus.send(
        deps.topics.deadLetter,
        letters.map(({ message, step, error }) => ({
          key: message.key ?? '',
          value: message.value,
          headers: {
            ...message.headers,
            'x-original-topic': batch.topic,
            'x-original-partition': String(batch.partition),
            'x-original-offset': message.offset,
            'x-error': error.slice(0, 500),
            'x-step': step,
            'x-first-seen-at': new Date().toISOString(),
          },
        })),
      ),
    );
    for (const letter of letters) deps.metrics.deadLetters.inc({ step: letter.step });
    deps.metrics.eventsDropped.inc({ reason: 'dead_letter' }, letters.length);
    deps.logger.warn({ topic: batch.topic, partition: batch.partition, count: letters.length, steps: letters.map((l) => l.step) }, 'messages dead-lettered');
  }

  async function process(batch: ConsumedBatch, messages: readonly ConsumedMessage[]): Promise<void> {
    const timer = (step: string) => deps.metrics.pipelineStepDuration.startTimer({ step });
    let done = timer('prepare');
    const { prepared, deadLetters } = await prepare(messages);
    done();
    if (prepared.length > 0) {
      const events = prepared.map((p) => p.event);
      done = timer('persons');
      const { enrichments, copies, warnings } = await runStep('persons', isPostgresOutage, () => personsStep(deps.db, groupTypes, personlessCache, events));
      done();
      done = timer('rows');
      const rows = events.map((event, i) => toEventRow(event, enrichments[i]!));
      // One token per batch content: an insert retried after its answer was lost is skipped.
      const deduplicationToken = createHash('sha1')
        .update(rows.map((r) => r.uuid).join(','))
        .digest('hex');
      done();
      done = timer('write');
      await runStep('write', isClickHouseOutage, () => Promise.all([writeCopies(deps.ch, copies), insertEvents(deps.ch, rows, { deduplicationToken })]));
      done();
      for (const type of warnings) deps.metrics.ingestionWarnings.inc({ type });
      deps.metrics.eventsWritten.inc({ topic: batch.topic }, rows.length);
    }
    await sendDeadLetters(batch, deadLetters);
  }

  return async (batch) => {
    try {
      await process(batch, batch.messages);
      deps.metrics.consumerBatches.inc({ topic: batch.topic, result: 'ok' });
    } catch (error) {
      if (error instanceof StepError && error.outage) {
        deps.metrics.consumerBatches.inc({ topic: batch.topic, result: 'outage' });
        throw error;
      }
      deps.logger.warn({ err: error, topic: batch.topic, partition: batch.partition }, 'batch failed on its data; replaying it message by message');
      for (const message of batch.messages) {
        try {
          await process(batch, [message]);
        } catch (single) {
          if (single instanceof StepError && single.outage) throw single;
          const step = single instanceof StepError ? single.step : 'unknown';
          await sendDeadLetters(batch, [{ message, step, error: single instanceof Error ? single.message : String(single) }]);
        }
      }
      deps.metrics.consumerBatches.inc({ topic: batch.topic, result: 'isolated' });
    }
  };
}
