import type { ClickHouseClient } from '@clickhouse/client';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { isPropertyGroup, type PropertyGroup } from '@sightline/properties';
import type { CohortDefinition } from './cohort-membership.sql';

/** A `cohorts` row. */
export interface CohortRow {
  id: number;
  team_id: number;
  name: string;
  description: string;
  filters: { properties?: unknown } | null;
  is_static: boolean;
  deleted: boolean;
  is_calculating: boolean;
  count: number | null;
  version: number | null;
  created_by_id: number | null;
  created_at: Date;
  last_calculation: Date | null;
}

/** A dynamic cohort's property group as the flag engine reads it (filters.properties), or null. */
export function cohortPropertyGroup(filters: CohortRow['filters']): PropertyGroup | null {
  const properties = filters?.properties;
  return isJsonObject(properties) && isPropertyGroup(properties as unknown as PropertyGroup) ? (properties as unknown as PropertyGroup) : null;
}

const toDefinition = (row: Pick<CohortRow, 'id' | 'name' | 'is_static' | 'filters'>): CohortDefinition => ({
  id: row.id,
  name: row.name,
  isStatic: row.is_static,
  properties: row.is_static ? null : cohortPropertyGroup(row.filters),
});

/** Every live cohort of the project, for queries that name cohorts (and cohorts inside them). */
export async function loadCohortDefinitions(db: Sql, teamId: number): Promise<Map<number, CohortDefinition>> {
  const rows = await db.query<CohortRow>('SELECT id, name, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted', [teamId]);
  return new Map(rows.map((row) => [row.id, toDefinition(row)]));
}

export async function listCohorts(db: Sql, teamId: number, page: { limit: number; offset: number }): Promise<{ count: number; rows: CohortRow[] }> {
  const [rows, total] = await Promise.all([
    db.query<CohortRow>('SELECT * FROM cohorts WHERE team_id = $1 AND NOT deleted ORDER BY id DESC LIMIT $2 OFFSET $3', [teamId, page.limit, page.offset]),
    db.query<{ n: string }>('SELECT count(*) AS n FROM cohorts WHERE team_id = $1 AND NOT deleted', [teamId]),
  ]);
  return { count: Number(total[0]!.n), rows };
}

export async function findCohort(db: Sql, teamId: number, id: number): Promise<CohortRow | null> {
  const rows = await db.query<CohortRow>('SELECT * FROM cohorts WHERE team_id = $1 AND id = $2', [teamId, id]);
  return rows[0] ?? null;
}

export interface CohortInput {
  name?: string;
  description?: string;
  filters?: { properties: PropertyGroup } | null;
  is_static?: boolean;
  deleted?: boolean;
}

export async function insertCohort(db: Sql, teamId: number, input: CohortInput, createdBy: number | null): Promise<CohortRow> {
  const rows = await db.query<CohortRow>(
    `INSERT INTO cohorts (team_id, name, description, filters, is_static, created_by_id, version, is_calculating)
     VALUES ($1, $2, $3, $4, $5, $6, 1, false) RETURNING *`,
    [teamId, input.name ?? '', input.description ?? '', input.filters ? JSON.stringify(input.filters) : null, input.is_static ?? false, createdBy],
  );
  return rows[0]!;
}

export async function updateCohort(db: Sql, teamId: number, id: number, input: CohortInput): Promise<CohortRow | null> {
  const rows = await db.query<CohortRow>(
    `UPDATE cohorts SET
       name = COALESCE($3, name),
       description = COALESCE($4, description),
       filters = CASE WHEN $5 THEN $6::jsonb ELSE filters END,
       deleted = COALESCE($7, deleted),
       version = COALESCE(version, 0) + 1
     WHERE team_id = $1 AND id = $2 RETURNING *`,
    [
      teamId,
      id,
      input.name ?? null,
      input.description ?? null,
      input.filters !== undefined,
      input.filters ? JSON.stringify(input.filters) : null,
      input.deleted ?? null,
    ],
  );
  return rows[0] ?? null;
}

export async function setCohortCount(db: Sql, id: number, count: number, at: Date): Promise<void> {
  await db.query('UPDATE cohorts SET count = $2, last_calculation = $3, is_calculating = false WHERE id = $1', [id, count, at]);
}

/**
 * Adds persons (by uuid or by any of their distinct ids) to a static cohort; answers how many
 * of the given ids named a person of the project. Unknown ids are skipped, as PostHog does.
 */
export async function addStaticCohortMembers(
  db: Sql,
  teamId: number,
  cohortId: number,
  ids: { personUuids?: string[]; distinctIds?: string[] },
): Promise<number> {
  const uuids = (ids.personUuids ?? []).filter((u) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(u));
  const rows = await db.query<{ id: string }>(
    `SELECT DISTINCT p.id FROM persons p
      WHERE p.team_id = $1 AND (p.uuid = ANY($2::uuid[]) OR p.id IN (SELECT person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = ANY($3::text[])))`,
    [teamId, uuids, ids.distinctIds ?? []],
  );
  if (rows.length > 0) {
    await db.query('INSERT INTO cohort_people (cohort_id, person_id, version) SELECT $1, unnest($2::bigint[]), 1 ON CONFLICT DO NOTHING', [
      cohortId,
      rows.map((r) => r.id),
    ]);
  }
  return rows.length;
}

export async function removeStaticCohortMember(db: Sql, teamId: number, cohortId: number, personUuid: string): Promise<void> {
  await db.query('DELETE FROM cohort_people WHERE cohort_id = $1 AND person_id IN (SELECT id FROM persons WHERE team_id = $2 AND uuid = $3::uuid)', [
    cohortId,
    teamId,
    personUuid,
  ]);
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
  const copied = await (
    await ch.query({
      query: `SELECT toString(person_id) AS uuid, argMax(is_deleted, version) AS deleted, max(version) AS latest_version
              FROM person_static_cohort WHERE team_id = {team:Int64} AND cohort_id = {cohort:Int64} GROUP BY person_id`,
      query_params: { team: teamId, cohort: cohortId },
      format: 'JSONEachRow',
    })
  ).json<{ uuid: string; deleted: number; latest_version: string }>();
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
