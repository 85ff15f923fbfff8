import { toClickHouseDateTime, type EventRow } from '@sightline/clickhouse';
import type { PreparedEvent } from './normalize.step';
import type { Enrichment } from './persons.step';

/** The ClickHouse events row of a processed event (docs/data-model.md#events-table). */
export function toEventRow(event: PreparedEvent, enrichment: Enrichment): EventRow {
  const row: EventRow = {
    uuid: event.uuid,
    event: event.event,
    // Serialised once, into the insert body (insertEvents).
    properties: event.properties,
    timestamp: toClickHouseDateTime(event.timestampMs),
    team_id: event.teamId,
    distinct_id: event.distinctId,
    elements_chain: event.elementsChain,
    created_at: toClickHouseDateTime(event.createdAtMs),
    person_id: enrichment.personId,
    person_properties: enrichment.personPropertiesJson,
    person_mode: enrichment.personMode,
  };
  if (enrichment.personCreatedAtMs !== null) row.person_created_at = toClickHouseDateTime(enrichment.personCreatedAtMs);
  for (const group of enrichment.groups) {
    const n = group.index as 0 | 1 | 2 | 3 | 4;
    row[`group${n}_properties`] = group.propertiesJson;
    row[`group${n}_created_at`] = toClickHouseDateTime(group.createdAtMs);
  }
  return row;
}
