import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import {
  addStaticCohortMembers,
  cohortDefinitionOf,
  findCohort,
  insertCohort,
  loadCohortDefinitions,
  queryPersons,
  refreshStaticCohort,
  removeStaticCohortMember,
  setCohortCount,
  UnknownCohortError,
  updateCohort,
  type CohortInput,
  type CohortRow,
  type StaticMemberIds,
} from '@sightline/insights';
import type { MetadataStore } from '@sightline/postgres';
import { countCohortMembers } from './cohort-count.query';
import { cohortMembership, cohortRefusal, cohortsContaining, definitionsWith } from './cohort-references';

export interface CohortsDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  now: () => number;
  /** Told after every cohort write: decide evaluates cohorts from the definitions cache. */
  flagChanges: { flagsChanged(teamId: number): Promise<void> };
  /** Told too: decide's per-process person caches hold each person's static cohorts. */
  personsChanged?: (teamId: number) => Promise<void>;
  /**
   * Active feature flags whose conditions name any of the cohorts: the feature-flags folder's
   * activeFlagsNamingCohorts, passed in so that cohorts and feature flags (which shows cohorts)
   * do not import each other.
   */
  flagsNamingCohorts: (teamId: number, cohortIds: readonly number[]) => Promise<{ key: string; name: string }[]>;
}

export const hasMemberIds = (ids: StaticMemberIds) => (ids.personUuids?.length ?? 0) + (ids.distinctIds?.length ?? 0) + (ids.emails?.length ?? 0) > 0;

async function decideInputsChanged(deps: CohortsDeps, teamId: number): Promise<void> {
  await deps.flagChanges.flagsChanged(teamId);
  await deps.personsChanged?.(teamId);
}

/**
 * Counts a dynamic cohort's members now, stored as count / last_calculation. A cohort naming
 * a cohort deleted since keeps its last count (its persons list answers why).
 */
async function countDynamic(deps: CohortsDeps, cohort: CohortRow): Promise<void> {
  let membership: Awaited<ReturnType<typeof cohortMembership>>;
  try {
    membership = await cohortMembership(deps.db, cohort, deps.now());
  } catch {
    return;
  }
  await setCohortCount(deps.db, cohort.id, await countCohortMembers(deps.ch, cohort.team_id, membership), new Date(deps.now()));
}

/** After a write: counts (static cohorts' members are copied to ClickHouse too) and tells decide. */
async function refreshed(deps: CohortsDeps, cohort: CohortRow): Promise<CohortRow> {
  if (!cohort.deleted) {
    if (cohort.is_static) await refreshStaticCohort(deps, cohort.team_id, cohort.id, deps.now());
    else await countDynamic(deps, cohort);
  }
  await decideInputsChanged(deps, cohort.team_id);
  return (await findCohort(deps.db, cohort.team_id, cohort.id))!;
}

/** The names (or keys) of active flags that use the cohort, directly or through cohorts naming it. */
export async function flagsUsingCohort(deps: Pick<CohortsDeps, 'db' | 'flagsNamingCohorts'>, cohort: CohortRow): Promise<string[]> {
  const containing = cohortsContaining(await loadCohortDefinitions(deps.db, cohort.team_id), cohort.id);
  return (await deps.flagsNamingCohorts(cohort.team_id, containing)).map((flag) => flag.name || flag.key);
}

/** Creates a cohort (with a static cohort's first members), counts it and tells decide. */
export async function createCohort(deps: CohortsDeps, teamId: number, userId: number, input: CohortInput, members: StaticMemberIds | null): Promise<CohortRow> {
  const cohort = await insertCohort(deps.db, teamId, input, userId);
  if (members && hasMemberIds(members)) await addStaticCohortMembers(deps, cohort.team_id, cohort.id, members, deps.now());
  return refreshed(deps, cohort);
}

/**
 * Applies an update (and a static cohort's added members), counts and tells decide. PostHog
 * refuses to delete a cohort that active feature flags use.
 */
export async function editCohort(deps: CohortsDeps, cohort: CohortRow, input: CohortInput, members: StaticMemberIds | null): Promise<CohortRow> {
  if (input.deleted === true && !cohort.deleted) {
    const flags = await flagsUsingCohort(deps, cohort);
    if (flags.length > 0) {
      throw errors.validation(
        `This cohort is used in ${flags.length} active feature flag(s): ${flags.join(', ')}. Please remove the cohort from these feature flags before deleting it.`,
        null,
        'invalid',
      );
    }
  }
  const updated = (await updateCohort(deps.db, cohort.team_id, cohort.id, input))!;
  if (members && hasMemberIds(members)) await addStaticCohortMembers(deps, updated.team_id, updated.id, members, deps.now());
  return refreshed(deps, updated);
}

/** Adds persons to a static cohort; naming no person of the project is a 400. */
export async function addPersonsToStaticCohort(deps: CohortsDeps, cohort: CohortRow, ids: StaticMemberIds): Promise<void> {
  const found = await addStaticCohortMembers(deps, cohort.team_id, cohort.id, ids, deps.now());
  if (found === 0) throw errors.validation('No valid users to add to cohort', 'person_ids', 'invalid');
  await decideInputsChanged(deps, cohort.team_id);
}

/** Removes a person from a static cohort; a person not in it is a 404. */
export async function removePersonFromStaticCohort(deps: CohortsDeps, cohort: CohortRow, personUuid: string): Promise<void> {
  if (!(await removeStaticCohortMember(deps, cohort.team_id, cohort.id, personUuid, deps.now()))) {
    throw errors.notFound('Person is not part of the cohort');
  }
  await decideInputsChanged(deps, cohort.team_id);
}

/** One page of the cohort's persons, evaluated now. */
export async function cohortPersonsPage(deps: CohortsDeps, cohort: CohortRow, page: { limit: number; offset: number }) {
  const definitions = await definitionsWith(deps.db, cohort.team_id, cohortDefinitionOf(cohort));
  try {
    return await queryPersons(deps.ch, { teamId: cohort.team_id, nowMs: deps.now(), cohortId: cohort.id, cohorts: definitions, ...page });
  } catch (error) {
    // A cohort this one names was deleted since it was written.
    if (error instanceof UnknownCohortError) throw cohortRefusal(error, 'filters', cohort.id, false);
    throw error;
  }
}
