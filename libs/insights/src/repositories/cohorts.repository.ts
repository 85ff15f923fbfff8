import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { isPropertyGroup, type PropertyGroup } from '@sightline/properties';
import { MAX_COHORT_NESTING, referencedCohortIds, type CohortDefinition } from '../cohorts/cohort-membership.sql';

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

/** The names of the project's cohorts among `ids`, deleted ones included (a flag may still name one). */
export async function cohortNamesByIds(db: Sql, teamId: number, ids: readonly number[]): Promise<{ id: number; name: string }[]> {
  if (ids.length === 0) return [];
  return db.query<{ id: number; name: string }>('SELECT id, name FROM cohorts WHERE team_id = $1 AND id = ANY($2::int[])', [teamId, ids]);
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
