import type { ClickHouseClient } from '@clickhouse/client';

export const EVENTS_TABLE = 'events';

export interface EventRow {
  uuid: string;
  event: string;
  /** JSON text */
  properties: string;
  /** DateTime64 text, see toClickHouseDateTime */
  timestamp: string;
  team_id: number;
  distinct_id: string;
  elements_chain: string;
  created_at: string;
  person_id: string;
  person_properties: string;
  person_mode: 'full' | 'propertyless' | 'force_upgrade';
}

/** One batched JSONEachRow insert; callers gather thousands of rows, never one row per insert. */
export async function insertEvents(client: ClickHouseClient, rows: readonly EventRow[]): Promise<void> {
  if (rows.length === 0) return;
  await client.insert({ table: EVENTS_TABLE, values: rows as EventRow[], format: 'JSONEachRow' });
}
