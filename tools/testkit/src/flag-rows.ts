/**
 * Rows for flag-evaluation tests and the decide benchmark, written straight into the
 * tables the management API and the worker own (feature_flags, persons, groups, cohorts).
 */
import { randomUUID } from 'node:crypto';
import type { FlagFilters } from '@sightline/flags';
import type { Sql } from '@sightline/postgres';

export async function insertFlag(
  db: Sql,
  teamId: number,
  flag: { key: string; filters: FlagFilters; active?: boolean; name?: string; ensureExperienceContinuity?: boolean },
): Promise<number> {
  const rows = await db.query<{ id: number }>(
    `INSERT INTO feature_flags (team_id, key, name, filters, active, ensure_experience_continuity)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [teamId, flag.key, flag.name ?? '', JSON.stringify(flag.filters), flag.active ?? true, flag.ensureExperienceContinuity ?? false],
  );
  return rows[0]!.id;
}

export async function insertPerson(db: Sql, teamId: number, distinctIds: string[], properties: Record<string, unknown>): Promise<number> {
  const [person] = await db.query<{ id: number }>('INSERT INTO persons (team_id, uuid, properties) VALUES ($1, $2, $3) RETURNING id', [
    teamId,
    randomUUID(),
    JSON.stringify(properties),
  ]);
  for (const distinctId of distinctIds) {
    await db.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [teamId, distinctId, person!.id]);
  }
  return person!.id;
}

export async function insertGroupType(db: Sql, teamId: number, groupType: string, index: number): Promise<void> {
  await db.query('INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, $2, $3)', [teamId, groupType, index]);
}

export async function insertGroup(db: Sql, teamId: number, index: number, key: string, properties: Record<string, unknown>): Promise<void> {
  await db.query('INSERT INTO groups (team_id, group_type_index, group_key, group_properties) VALUES ($1, $2, $3, $4)', [
    teamId,
    index,
    key,
    JSON.stringify(properties),
  ]);
}

export async function insertCohort(db: Sql, teamId: number, cohort: { isStatic: boolean; filters?: unknown; personIds?: number[] }): Promise<number> {
  const [row] = await db.query<{ id: number }>('INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, $2, $3, $4) RETURNING id', [
    teamId,
    'test cohort',
    cohort.isStatic,
    cohort.filters === undefined ? null : JSON.stringify(cohort.filters),
  ]);
  for (const personId of cohort.personIds ?? []) await db.query('INSERT INTO cohort_people (cohort_id, person_id) VALUES ($1, $2)', [row!.id, personId]);
  return row!.id;
}
