import { queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import type { Sql } from '@sightline/postgres';
import { setCohortCount } from './cohorts.repository';
import { UUID_PATTERN } from '@sightline/json-input';

/** Ways a request names the persons to add to a static cohort. */
export interface StaticMemberIds {
  personUuids?: readonly string[];
  distinctIds?: readonly string[];
  /** Matched against the person's `email` property, as PostHog's CSV upload does. */
  emails?: readonly string[];
}

/** A uuid in its text form, as persons.uuid reads one (anything else would make PostgreSQL fail the cast). */
export const isUuidText = (text: string): boolean => UUID_PATTERN.test(text);

/** The stores a static cohort's members live in: PostgreSQL (decide reads) and ClickHouse (queries read). */
export interface CohortStores {
  db: Sql;
  ch: ClickHouseClient;
}

/**
 * Adds persons (by uuid, by any of their distinct ids, or by email) to a static cohort in
 * PostgreSQL, then copies the members to ClickHouse and stores the new count. Ids that name no
 * person of the project are skipped, as PostHog does. Answers how many persons the ids named.
 */
export async function addStaticCohortMembers(stores: CohortStores, teamId: number, cohortId: number, ids: StaticMemberIds, nowMs: number): Promise<number> {
  const uuids = (ids.personUuids ?? []).filter(isUuidText);
  const rows = await stores.db.query<{ id: string }>(
    `SELECT p.id FROM persons p WHERE p.team_id = $1 AND p.uuid = ANY($2::uuid[])
     UNION SELECT d.person_id FROM person_distinct_ids d WHERE d.team_id = $1 AND d.distinct_id = ANY($3::text[])
     UNION SELECT p.id FROM persons p WHERE p.team_id = $1 AND cardinality($4::text[]) > 0 AND p.properties->>'email' = ANY($4::text[])`,
    [teamId, uuids, ids.distinctIds ?? [], ids.emails ?? []],
  );
  if (rows.length > 0) {
    await stores.db.query('INSERT INTO cohort_people (cohort_id, person_id, version) SELECT $1, unnest($2::bigint[]), 1 ON CONFLICT DO NOTHING', [
      cohortId,
      rows.map((r) => r.id),
    ]);
  }
  await refreshStaticCohort(stores, teamId, cohortId, nowMs);
  return rows.length;
}

/**
 * Adds persons by their PostgreSQL id (bigint, as text or number) to a new static cohort's
 * members in PostgreSQL, `batch` ids a statement; refreshStaticCohort copies them to ClickHouse.
 */
export async function insertStaticCohortPeople(db: Sql, cohortId: number, personIds: readonly (string | number)[], batch: number): Promise<void> {
  for (let i = 0; i < personIds.length; i += batch) {
    await db.query('INSERT INTO cohort_people (cohort_id, person_id, version) SELECT $1, unnest($2::bigint[]), 1', [cohortId, personIds.slice(i, i + batch)]);
  }
}

/** Removes a person (by uuid) from a static cohort in both stores; answers whether they were a member. */
export async function removeStaticCohortMember(stores: CohortStores, teamId: number, cohortId: number, personUuid: string, nowMs: number): Promise<boolean> {
  if (!isUuidText(personUuid)) return false;
  const removed = await stores.db.query(
    'DELETE FROM cohort_people WHERE cohort_id = $1 AND person_id IN (SELECT id FROM persons WHERE team_id = $2 AND uuid = $3::uuid) RETURNING person_id',
    [cohortId, teamId, personUuid],
  );
  await refreshStaticCohort(stores, teamId, cohortId, nowMs);
  return removed.length > 0;
}

/** Copies a static cohort's members to ClickHouse and stores their count (count, last_calculation). */
export async function refreshStaticCohort(stores: CohortStores, teamId: number, cohortId: number, nowMs: number): Promise<number> {
  const count = await syncStaticCohortToClickHouse(stores.db, stores.ch, teamId, cohortId, nowMs);
  await setCohortCount(stores.db, cohortId, count, new Date(nowMs));
  return count;
}

/**
 * Makes ClickHouse's copy of a static cohort's members (person_static_cohort) equal to
 * PostgreSQL's cohort_people: adds the missing members and marks the removed ones deleted,
 * under one new version. Idempotent, so it can run after every change (and again after a
 * failure). Answers the member count.
 */
export async function syncStaticCohortToClickHouse(db: Sql, ch: ClickHouseClient, teamId: number, cohortId: number, nowMs: number): Promise<number> {
  const members = (
    await db.query<{ uuid: string }>('SELECT p.uuid::text AS uuid FROM cohort_people c JOIN persons p ON p.id = c.person_id WHERE c.cohort_id = $1', [cohortId])
  ).map((r) => r.uuid);
  const copied = await queryClickhouse<{ uuid: string; deleted: number; latest_version: string }>(ch, {
    kind: 'cohorts.static_members_copy',
    teamId,
    sql: `SELECT toString(person_id) AS uuid, argMax(is_deleted, version) AS deleted, max(version) AS latest_version
              FROM person_static_cohort WHERE team_id = {team:Int64} AND cohort_id = {cohort:Int64} GROUP BY person_id`,
    params: { team: teamId, cohort: cohortId },
  });
  const want = new Set(members);
  const have = new Set(copied.filter((r) => Number(r.deleted) === 0).map((r) => r.uuid));
  // Later than every stored version, even when the clock did not move (or went back).
  const version = Math.max(nowMs, ...copied.map((r) => Number(r.latest_version) + 1));
  const rows = [
    ...members.filter((u) => !have.has(u)).map((person_id) => ({ team_id: teamId, cohort_id: cohortId, person_id, is_deleted: 0, version })),
    ...[...have].filter((u) => !want.has(u)).map((person_id) => ({ team_id: teamId, cohort_id: cohortId, person_id, is_deleted: 1, version })),
  ];
  if (rows.length > 0) await ch.insert({ table: 'person_static_cohort', values: rows, format: 'JSONEachRow' });
  return members.length;
}
