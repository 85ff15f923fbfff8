import type { ClickHouseClient } from '@sightline/clickhouse';

/** A row of ClickHouse `person`: a versioned copy of the Postgres person (read with argMax(…, version)). */
export interface PersonCopy {
  id: string;
  team_id: number;
  created_at: string;
  properties: string;
  is_identified: 0 | 1;
  is_deleted: 0 | 1;
  version: number;
}

/** A row of ClickHouse `person_distinct_id2`. */
export interface PersonDistinctIdCopy {
  team_id: number;
  distinct_id: string;
  person_id: string;
  is_deleted: 0 | 1;
  version: number;
}

/** A row of ClickHouse `groups`. */
export interface GroupCopy {
  team_id: number;
  group_type_index: number;
  group_key: string;
  created_at: string;
  group_properties: string;
  version: number;
}

/**
 * Writes the copies, one batched insert per table. Rows repeat harmlessly: every table is a
 * ReplacingMergeTree(version), and a copy is only ever written with its Postgres version.
 */
export async function writeCopies(
  ch: ClickHouseClient,
  copies: { persons?: PersonCopy[]; distinctIds?: PersonDistinctIdCopy[]; groups?: GroupCopy[] },
): Promise<void> {
  const inserts: Promise<unknown>[] = [];
  if (copies.persons?.length) inserts.push(ch.insert({ table: 'person', values: copies.persons, format: 'JSONEachRow' }));
  if (copies.distinctIds?.length) inserts.push(ch.insert({ table: 'person_distinct_id2', values: copies.distinctIds, format: 'JSONEachRow' }));
  if (copies.groups?.length) inserts.push(ch.insert({ table: 'groups', values: copies.groups, format: 'JSONEachRow' }));
  await Promise.all(inserts);
}
