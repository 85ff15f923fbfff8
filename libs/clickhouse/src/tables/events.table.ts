import type { ClickHouseClient } from '@clickhouse/client';

export const EVENTS_TABLE = 'events';

/** The properties and creation time of the group attached at index N (docs/data-model.md#groups). */
export type EventGroupColumns = {
  [N in 0 | 1 | 2 | 3 | 4 as `group${N}_properties`]?: string;
} & {
  [N in 0 | 1 | 2 | 3 | 4 as `group${N}_created_at`]?: string;
};

export type EventRow = EventGroupColumns & {
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
  /** DateTime64 text; absent for personless events */
  person_created_at?: string;
  /** JSON text of the person's properties after this event's updates ('{}' when personless) */
  person_properties: string;
  person_mode: 'full' | 'propertyless' | 'force_upgrade';
};

/**
 * One batched JSONEachRow insert; callers gather thousands of rows, never one row per insert.
 * `deduplicationToken` (one per batch) makes a retried insert of rows that did land a no-op.
 */
export async function insertEvents(client: ClickHouseClient, rows: readonly EventRow[], options: { deduplicationToken?: string } = {}): Promise<void> {
  if (rows.length === 0) return;
  await client.insert({
    table: EVENTS_TABLE,
    values: rows as EventRow[],
    format: 'JSONEachRow',
    clickhouse_settings: options.deduplicationToken ? { insert_deduplication_token: options.deduplicationToken } : undefined,
  });
}
