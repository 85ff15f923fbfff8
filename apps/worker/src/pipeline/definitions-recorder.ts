import {
  collectDefinitionSightings,
  mergeDefinitionSightings,
  recordDefinitionSightings,
  type DefinitionSightings,
} from '@sightline/event-property-definitions';
import type { Logger } from '@sightline/logger';
import type { Sql } from '@sightline/postgres';
import type { PreparedEvent } from './normalize.step';

async function writeSightings(db: Sql, sightings: DefinitionSightings, events: number, logger: Logger): Promise<void> {
  try {
    await recordDefinitionSightings(db, sightings);
  } catch (err) {
    logger.warn({ err, events }, 'event and property definitions of a run not recorded');
  }
}

export interface DefinitionsRecorder {
  /** Queues the definitions of events being or already written; returns at once. */
  record(events: readonly PreparedEvent[]): void;
  /** Resolves once everything queued so far is recorded (or refused and logged). */
  idle(): Promise<void>;
}

/**
 * Records the event names and property keys of runs as they are written (event_definitions,
 * property_definitions). Definitions feed pickers and are not part of the data: when PostgreSQL
 * refuses them the run still counts as done (the events are written), and the next events of the
 * same names record them again; a run whose write fails records them again when it is retried
 * (its volumes counted twice, as a redelivered run's always were). One write is in flight at a time; runs that finish meanwhile
 * have their sightings merged (volumes added) into the next write, so concurrent runs share one
 * upsert and a slow PostgreSQL never grows a queue. A run waits for `idle()` before its batches
 * are committed, so no write outlives the worker's stop.
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
