import { collectDefinitionSightings, recordDefinitionSightings } from '@sightline/definitions';
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
  try {
    await recordDefinitionSightings(db, collectDefinitionSightings(events));
  } catch (err) {
    logger.warn({ err, events: events.length }, 'event and property definitions of a run not recorded');
  }
}
