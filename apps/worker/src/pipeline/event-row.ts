import type { EventValues } from '@sightline/clickhouse';
import type { PreparedEvent } from './normalize.step';
import type { Enrichment } from './persons.step';

/** The ClickHouse events row of a processed event (docs/data-model.md#events-table). */
export function toEventValues(event: PreparedEvent, enrichment: Enrichment): EventValues {
  return {
    uuid: event.uuid,
    event: event.event,
    // The text as sent when normalisation left it so; else serialised once, as the body is written.
    properties: event.propertiesBytes ?? event.properties,
    timestamp: event.timestampMs,
    team_id: event.teamId,
    distinct_id: event.distinctId,
    elements_chain: event.elementsChain,
    created_at: event.createdAtMs,
    person_id: enrichment.personId,
    person_created_at: enrichment.personCreatedAtMs,
    person_properties: enrichment.personPropertiesJson,
    person_mode: enrichment.personMode,
    groups: enrichment.groups,
  };
}
