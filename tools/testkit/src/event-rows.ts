import { randomUUID } from 'node:crypto';
import { toClickHouseDateTime, type EventRow } from '@sightline/clickhouse';

/** An events-table row for tests that insert events straight into ClickHouse (no worker). */
export function testEventRow(e: {
  event: string;
  atMs: number;
  teamId?: number;
  uuid?: string;
  distinctId?: string;
  /** The person id frozen on the row at ingestion (default: a fresh one). */
  personId?: string;
  properties?: Record<string, unknown>;
  personProperties?: Record<string, unknown>;
  /** Group properties by group type index. */
  groupProperties?: Record<number, Record<string, unknown>>;
  /** Autocapture's elements chain (default none). */
  elementsChain?: string;
}): EventRow {
  return {
    uuid: e.uuid ?? randomUUID(),
    event: e.event,
    properties: JSON.stringify(e.properties ?? {}),
    timestamp: toClickHouseDateTime(e.atMs),
    team_id: e.teamId ?? 1,
    distinct_id: e.distinctId ?? 'u1',
    elements_chain: e.elementsChain ?? '',
    created_at: toClickHouseDateTime(e.atMs),
    person_id: e.personId ?? randomUUID(),
    person_properties: e.personProperties ? JSON.stringify(e.personProperties) : '',
    // As the worker writes it: an event that does not process a person profile is personless.
    person_mode: e.properties?.['$process_person_profile'] === false ? 'propertyless' : 'full',
    ...Object.fromEntries(Object.entries(e.groupProperties ?? {}).map(([index, props]) => [`group${index}_properties`, JSON.stringify(props)])),
  };
}
