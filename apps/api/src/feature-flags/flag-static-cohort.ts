import { loadProjectFlagDefinitions } from '@sightline/flag-store';
import { evaluateFlags } from '@sightline/flags';
import { listPersonsForFlags } from '@sightline/persons';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { findCohort, insertCohort, insertStaticCohortPeople, refreshStaticCohort, setCohortCount, type CohortRow } from '@sightline/insights';
import type { MetadataStore, Sql } from '@sightline/postgres';
import type { FlagRow } from './feature-flags.repository';

const PERSON_BATCH = 1000;

/**
 * The persons of the project for whom `flag` is on now, evaluated by the flag engine
 * with their stored properties, static cohorts and experience-continuity hash keys,
 * like PostHog's get_cohort_actors_for_feature_flag. Group flags have no person
 * members (PostHog skips them too).
 */
export async function personsWithFlagEnabled(db: Sql, flag: FlagRow, now: Date): Promise<string[]> {
  if ((flag.filters['aggregation_group_type_index'] ?? null) !== null || flag.deleted || !flag.active) return [];
  // The same definitions decide evaluates (every live flag, for flag-on-flag conditions; cohorts; group types).
  const { flags, cohorts, groupTypeNames } = await loadProjectFlagDefinitions(db, flag.team_id);
  const enabled: string[] = [];
  for (let persons = await listPersonsForFlags(db, flag.team_id, '0', PERSON_BATCH); persons.length > 0;) {
    for (const person of persons) {
      if (person.distinctId === null) continue;
      const results = evaluateFlags(
        flags,
        {
          distinctId: person.distinctId,
          personProperties: person.properties,
          groups: {},
          groupProperties: {},
          groupTypeNames,
          cohorts,
          staticCohortIds: person.staticCohortIds,
          hashKeyOverrides: person.hashKeyOverrides,
          now,
        },
        { onlyKeys: [flag.key] },
      );
      if (results.get(flag.key)?.enabled) enabled.push(person.id);
    }
    persons = await listPersonsForFlags(db, flag.team_id, persons[persons.length - 1]!.id, PERSON_BATCH);
  }
  return enabled;
}

/**
 * PostHog's create_static_cohort_for_flag: a static cohort named after the flag and the
 * time, holding the persons for whom the flag is on. PostHog fills it in a background
 * task; here it is filled before answering, so the answer already has its count. The
 * members are written to PostgreSQL (decide reads them) and then copied to ClickHouse's
 * person_static_cohort (queries read them) before the cohort is answered.
 */
export async function createStaticCohortForFlag(
  stores: { db: MetadataStore; ch: ClickHouseClient },
  flag: FlagRow,
  userId: number,
  now: Date,
): Promise<CohortRow> {
  const { db } = stores;
  const persons = await personsWithFlagEnabled(db, flag, now);
  const stamp = now.toISOString().slice(0, 19).replace('T', ' ');
  const cohortId = await db.transaction(async (tx) => {
    const cohort = await insertCohort(tx, flag.team_id, { name: `Users with feature flag ${flag.key} enabled at ${stamp}`, is_static: true }, userId);
    await insertStaticCohortPeople(tx, cohort.id, persons, PERSON_BATCH);
    // Counted with its members, should the copy to ClickHouse below fail.
    await setCohortCount(tx, cohort.id, persons.length, now);
    return cohort.id;
  });
  await refreshStaticCohort(stores, flag.team_id, cohortId, now.getTime());
  return (await findCohort(db, flag.team_id, cohortId))!;
}
