import { evaluateFlags, type CohortDefinition, type FlagDefinition, type PropertyGroup } from '@sightline/flags';
import type { MetadataStore, Sql } from '@sightline/postgres';
import type { FlagRow } from './feature-flags.repository';

const PERSON_BATCH = 1000;

interface PersonRow {
  id: string;
  properties: Record<string, unknown>;
  distinct_id: string | null;
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) groups.set(key(row), [...(groups.get(key(row)) ?? []), row]);
  return groups;
}

const asDefinition = (flag: FlagRow): FlagDefinition => ({
  id: flag.id,
  team_id: flag.team_id,
  key: flag.key,
  name: flag.name,
  filters: flag.filters,
  active: flag.active,
  deleted: flag.deleted,
  ensure_experience_continuity: flag.ensure_experience_continuity,
  version: flag.version,
  evaluation_runtime: flag.evaluation_runtime,
});

async function cohortDefinitions(db: Sql, teamId: number): Promise<Map<number, CohortDefinition>> {
  const rows = await db.query<{ id: number; is_static: boolean; filters: { properties?: PropertyGroup } | null }>(
    'SELECT id, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted',
    [teamId],
  );
  return new Map(rows.map((c) => [c.id, { id: c.id, is_static: c.is_static, properties: c.filters?.properties ?? null }]));
}

/**
 * The persons of the project for whom `flag` is on now, evaluated by the flag engine
 * with their stored properties, static cohorts and experience-continuity hash keys,
 * like PostHog's get_cohort_actors_for_feature_flag. Group flags have no person
 * members (PostHog skips them too).
 */
export async function personsWithFlagEnabled(db: Sql, flag: FlagRow, now: Date): Promise<string[]> {
  if ((flag.filters['aggregation_group_type_index'] ?? null) !== null || flag.deleted || !flag.active) return [];
  const teamId = flag.team_id;
  // Every live flag of the project: flag-on-flag conditions evaluate their dependencies.
  const flags = (await db.query<FlagRow>('SELECT * FROM feature_flags WHERE team_id = $1 AND NOT deleted', [teamId])).map(asDefinition);
  const cohorts = await cohortDefinitions(db, teamId);
  const groupTypes = await db.query<{ group_type: string; group_type_index: number }>(
    'SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1',
    [teamId],
  );
  const groupTypeNames = new Map(groupTypes.map((g) => [Number(g.group_type_index), g.group_type]));
  const enabled: string[] = [];
  let after = '0';
  for (;;) {
    const persons = await db.query<PersonRow>(
      `SELECT p.id::text AS id, p.properties,
              (SELECT d.distinct_id FROM person_distinct_ids d WHERE d.team_id = p.team_id AND d.person_id = p.id
                ORDER BY d.version, d.distinct_id LIMIT 1) AS distinct_id
         FROM persons p WHERE p.team_id = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`,
      [teamId, after, PERSON_BATCH],
    );
    if (persons.length === 0) break;
    after = persons[persons.length - 1]!.id;
    const ids = persons.map((p) => p.id);
    const [memberships, overrides] = await Promise.all([
      db.query<{ person_id: string; cohort_id: number }>(
        `SELECT cp.person_id::text AS person_id, cp.cohort_id FROM cohort_people cp JOIN cohorts c ON c.id = cp.cohort_id
          WHERE c.team_id = $1 AND c.is_static AND cp.person_id = ANY($2::bigint[])`,
        [teamId, ids],
      ),
      db.query<{ person_id: string; feature_flag_key: string; hash_key: string }>(
        'SELECT person_id::text AS person_id, feature_flag_key, hash_key FROM feature_flag_hash_key_overrides WHERE team_id = $1 AND person_id = ANY($2::bigint[])',
        [teamId, ids],
      ),
    ]);
    const staticCohortsOf = groupBy(memberships, (m) => m.person_id);
    const overridesOf = groupBy(overrides, (o) => o.person_id);
    for (const person of persons) {
      if (person.distinct_id === null) continue;
      const results = evaluateFlags(
        flags,
        {
          distinctId: person.distinct_id,
          personProperties: person.properties ?? {},
          groups: {},
          groupProperties: {},
          groupTypeNames,
          cohorts,
          staticCohortIds: new Set((staticCohortsOf.get(person.id) ?? []).map((m) => m.cohort_id)),
          hashKeyOverrides: Object.fromEntries((overridesOf.get(person.id) ?? []).map((o) => [o.feature_flag_key, o.hash_key])),
          now,
        },
        { onlyKeys: [flag.key] },
      );
      if (results.get(flag.key)?.enabled) enabled.push(person.id);
    }
  }
  return enabled;
}

/**
 * PostHog's create_static_cohort_for_flag: a static cohort named after the flag and the
 * time, holding the persons for whom the flag is on. PostHog fills it in a background
 * task; here it is filled before answering, so the answer already has its count.
 */
export async function createStaticCohortForFlag(db: MetadataStore, flag: FlagRow, userId: number, now: Date) {
  const persons = await personsWithFlagEnabled(db, flag, now);
  const stamp = now.toISOString().slice(0, 19).replace('T', ' ');
  return db.transaction(async (tx) => {
    const [cohort] = await tx.query<{ id: number; name: string; created_at: Date; last_calculation: Date }>(
      `INSERT INTO cohorts (team_id, name, is_static, is_calculating, count, created_by_id, last_calculation, version)
       VALUES ($1, $2, true, false, $3, $4, $5, 1) RETURNING id, name, created_at, last_calculation`,
      [flag.team_id, `Users with feature flag ${flag.key} enabled at ${stamp}`, persons.length, userId, now],
    );
    for (let i = 0; i < persons.length; i += PERSON_BATCH) {
      await tx.query('INSERT INTO cohort_people (cohort_id, person_id, version) SELECT $1, unnest($2::bigint[]), 1', [
        cohort!.id,
        persons.slice(i, i + PERSON_BATCH),
      ]);
    }
    return { ...cohort!, count: persons.length };
  });
}
