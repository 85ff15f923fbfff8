import { collectDefinitionSightings, mergeDefinitionSightings, recordDefinitionSightings, type DefinitionSightings } from '@sightline/definitions';
import type { Logger } from '@sightline/logger';
import type { Sql } from '@sightline/postgres';
import type { PreparedEvent } from './normalize.step';

/**
 * Records the event names and property keys of a written run (event_definitions,
 * property_definitions). Definitions feed pickers and are not part of the data: when PostgreSQL
 * refuses them the run still counts as done (the events are written), and the next events of the
 * same names record them again.
 */
export async function definitionsStep(db: Sql, events: readonly PreparedEvent[], logger: Logger): Promise<void> {
  await writeSightings(db, collectDefinitionSightings(events), events.length, logger);
}

async function writeSightings(db: Sql, sightings: DefinitionSightings, events: number, logger: Logger): Promise<void> {
  try {
    await recordDefinitionSightings(db, sightings);
  } catch (err) {
    logger.warn({ err, events }, 'event and property definitions of a run not recorded');
  }
}

export interface DefinitionsRecorder {
  /** Queues the definitions of events already written; returns at once. */
  record(events: readonly PreparedEvent[]): void;
  /** Resolves once everything queued so far is recorded (or refused and logged). */
  idle(): Promise<void>;
}

/**
 * Records definitions off the run's critical path: a run queues the sightings of the events it
 * has written and goes on (its batches are committed without waiting for them). One write is in
 * flight at a time; runs that finish meanwhile have their sightings merged (volumes added) into
 * the next write, so a slow PostgreSQL costs one upsert per write, never a growing queue.
 * Definitions may lag the events by a write; a crash loses at most the sightings not yet written,
 * which the next events of the same names record again.
 */
export function createDefinitionsRecorder(db: Sql, logger: Logger): DefinitionsRecorder {
  let pending: { sightings: DefinitionSightings; events: number } | null = null;
  let writing: Promise<void> | null = null;

  const writeAll = async () => {
    while (pending) {
      const { sightings, events } = pending;
      pending = null;
      await writeSightings(db, sightings, events, logger);
    }
    writing = null;
  };

  return {
    record(events) {
      if (events.length === 0) return;
      const sightings = collectDefinitionSightings(events);
      pending = pending
        ? { sightings: mergeDefinitionSightings(pending.sightings, sightings), events: pending.events + events.length }
        : { sightings, events: events.length };
      writing ??= writeAll();
    },
    async idle() {
      while (writing) await writing;
    },
  };
}
