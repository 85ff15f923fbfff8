import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@sightline/clickhouse';
import type { Sql } from '@sightline/postgres';

export interface TestPerson {
  /** persons.id in PostgreSQL. */
  id: number;
  uuid: string;
}

/**
 * A person as the worker leaves one: the PostgreSQL rows (persons, person_distinct_ids) and
 * their ClickHouse copies (person, person_distinct_id2) at version 0.
 */
export async function createTestPerson(
  stores: { db: Sql; ch: ClickHouseClient },
  overrides: { teamId?: number; distinctIds?: string[]; properties?: Record<string, unknown>; uuid?: string; createdAt?: string } = {},
): Promise<TestPerson> {
  const teamId = overrides.teamId ?? 1;
  const uuid = overrides.uuid ?? randomUUID();
  const properties = overrides.properties ?? {};
  const distinctIds = overrides.distinctIds ?? [uuid];
  // The same created_at in both stores when one is given (PostgreSQL's is UTC, as ClickHouse's).
  const [row] = await stores.db.query<{ id: number }>(
    "INSERT INTO persons (team_id, uuid, properties, created_at) VALUES ($1, $2, $3, COALESCE($4::timestamp AT TIME ZONE 'UTC', now())) RETURNING id",
    [teamId, uuid, JSON.stringify(properties), overrides.createdAt ?? null],
  );
  for (const distinctId of distinctIds) {
    await stores.db.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [teamId, distinctId, row!.id]);
  }
  await stores.ch.insert({
    table: 'person',
    format: 'JSONEachRow',
    values: [
      {
        id: uuid,
        team_id: teamId,
        created_at: overrides.createdAt ?? '2024-01-01 00:00:00',
        properties: JSON.stringify(properties),
        is_identified: 0,
        is_deleted: 0,
        version: 0,
      },
    ],
  });
  await stores.ch.insert({
    table: 'person_distinct_id2',
    format: 'JSONEachRow',
    values: distinctIds.map((distinct_id) => ({ team_id: teamId, distinct_id, person_id: uuid, is_deleted: 0, version: 0 })),
  });
  return { id: Number(row!.id), uuid };
}

/** A later version of a person's ClickHouse copy: new properties, or deleted. */
export async function updateTestPersonCopy(
  ch: ClickHouseClient,
  person: TestPerson,
  change: { teamId?: number; version: number; properties?: Record<string, unknown>; deleted?: boolean },
): Promise<void> {
  await ch.insert({
    table: 'person',
    format: 'JSONEachRow',
    values: [
      {
        id: person.uuid,
        team_id: change.teamId ?? 1,
        created_at: '2024-01-01 00:00:00',
        properties: JSON.stringify(change.properties ?? {}),
        is_identified: 0,
        is_deleted: change.deleted ? 1 : 0,
        version: change.version,
      },
    ],
  });
}

/**
 * A group as the worker leaves one after a `$groupidentify`: the PostgreSQL row (groups) and its
 * ClickHouse copy (groups) at version 0. The group type must be mapped separately (insertGroupType).
 */
export async function createTestGroup(
  stores: { db: Sql; ch: ClickHouseClient },
  group: { teamId?: number; groupTypeIndex: number; groupKey: string; properties?: Record<string, unknown>; createdAt?: string },
): Promise<void> {
  const teamId = group.teamId ?? 1;
  const createdAt = group.createdAt ?? '2024-01-01 00:00:00';
  const properties = JSON.stringify(group.properties ?? {});
  await stores.db.query(
    "INSERT INTO groups (team_id, group_type_index, group_key, group_properties, created_at) VALUES ($1, $2, $3, $4, $5::timestamp AT TIME ZONE 'UTC')",
    [teamId, group.groupTypeIndex, group.groupKey, properties, createdAt],
  );
  await stores.ch.insert({
    table: 'groups',
    format: 'JSONEachRow',
    values: [
      { group_type_index: group.groupTypeIndex, group_key: group.groupKey, created_at: createdAt, team_id: teamId, group_properties: properties, version: 0 },
    ],
  });
}
