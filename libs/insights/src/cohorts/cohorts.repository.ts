import type { ClickHouseClient } from '@clickhouse/client';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { isPropertyGroup, type PropertyGroup } from '@sightline/properties';
import { MAX_COHORT_NESTING, referencedCohortIds, type CohortDefinition } from './cohort-membership.sql';

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

/** A cohorts row as queries read it. */
export const cohortDefinitionOf = (row: Pick<CohortRow, 'id' | 'name' | 'is_static' | 'filters'>): CohortDefinition => ({
  id: row.id,
  name: row.name,
  isStatic: row.is_static,
  properties: row.is_static ? null : cohortPropertyGroup(row.filters),
});

/** Every live cohort of the project, for queries that name cohorts (and cohorts inside them). */
export async function loadCohortDefinitions(db: Sql, teamId: number): Promise<Map<number, CohortDefinition>> {
  const rows = await db.query<CohortRow>('SELECT id, name, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted', [teamId]);
  return new Map(rows.map((row) => [row.id, cohortDefinitionOf(row)]));
}

const isCohortId = (id: number) => Number.isInteger(id) && id >= 1 && id <= 2_147_483_647;

/**
 * The live cohorts of the project a query names, with the cohorts their filters name in turn
 * (one read per level, at most MAX_COHORT_NESTING levels). Ids that name no live cohort of the
 * project are absent from the answer: cohortMembershipSql then refuses them by id.
 */
export async function loadCohortsForQuery(db: Sql, teamId: number, ids: number[]): Promise<Map<number, CohortDefinition>> {
  const loaded = new Map<number, CohortDefinition>();
  let wanted = [...new Set(ids.filter(isCohortId))];
  for (let level = 0; level < MAX_COHORT_NESTING && wanted.length > 0; level++) {
    const rows = await db.query<CohortRow>('SELECT id, name, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted AND id = ANY($2::int[])', [
      teamId,
      wanted,
    ]);
    for (const row of rows) loaded.set(row.id, cohortDefinitionOf(row));
    wanted = [...new Set(rows.flatMap((row) => referencedCohortIds(loaded.get(row.id)!.properties)))].filter((id) => isCohortId(id) && !loaded.has(id));
  }
  return loaded;
}

export interface CohortListFilter {
  limit: number;
  offset: number;
  /** PostHog's `type` query parameter: static or dynamic cohorts only. */
  isStatic?: boolean;
  /** Part of the name, case-insensitive. */
  search?: string;
  createdById?: number;
}

/** The project's live cohorts, newest first (PostHog orders by -created_at). */
export async function listCohorts(db: Sql, teamId: number, filter: CohortListFilter): Promise<{ count: number; rows: CohortRow[] }> {
  const where = `team_id = $1 AND NOT deleted AND ($2::boolean IS NULL OR is_static = $2)
    AND ($3::text IS NULL OR strpos(lower(name), lower($3)) > 0)
    AND ($4::int IS NULL OR created_by_id = $4)`;
  const args = [teamId, filter.isStatic ?? null, filter.search ?? null, filter.createdById ?? null];
  const [rows, total] = await Promise.all([
    db.query<CohortRow>(`SELECT * FROM cohorts WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`, [...args, filter.limit, filter.offset]),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM cohorts WHERE ${where}`, args),
  ]);
  return { count: Number(total[0]!.n), rows };
}

/** The project's live cohorts, oldest first. */
export async function findCohorts(db: Sql, teamId: number): Promise<CohortRow[]> {
  return db.query<CohortRow>('SELECT * FROM cohorts WHERE team_id = $1 AND NOT deleted ORDER BY id', [teamId]);
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

/** Ways a request names the persons to add to a static cohort. */
export interface StaticMemberIds {
  personUuids?: readonly string[];
  distinctIds?: readonly string[];
  /** Matched against the person's `email` property, as PostHog's CSV upload does. */
  emails?: readonly string[];
}

/** A uuid in its text form, as persons.uuid reads one (anything else would make PostgreSQL fail the cast). */
export const isUuidText = (text: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);

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
