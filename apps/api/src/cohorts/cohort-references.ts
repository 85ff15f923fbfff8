import { errors } from '@sightline/http';
import {
  cohortDefinitionOf,
  cohortMembershipSql,
  loadCohortsForQuery,
  referencedCohortIds,
  UnknownCohortError,
  type CohortDefinition,
  type CohortRow,
} from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { QueryParams, type PropertyGroup } from '@sightline/properties';
import type { CohortMembership } from './cohort-count.query';

/** A cohort that cannot be used (unknown, deleted, in a loop, too deep) as the 400 a client gets. */
export function cohortRefusal(error: UnknownCohortError, attr: string, selfId: number | null, direct: boolean) {
  if (error.reason === 'cycle' && selfId !== null && error.cohortId === selfId && direct) {
    return errors.validation('A cohort cannot contain itself.', attr, 'invalid');
  }
  return errors.validation(error.message, attr, error.reason === 'unknown' ? 'cohort_does_not_exist' : 'invalid');
}

/** The cohorts a definition names, loaded (cohorts inside them too), with the definition itself under its id. */
export async function definitionsWith(db: Sql, teamId: number, self: CohortDefinition): Promise<Map<number, CohortDefinition>> {
  const definitions = await loadCohortsForQuery(db, teamId, referencedCohortIds(self.properties));
  definitions.set(self.id, self);
  return definitions;
}

/** Every cohort a definition names must be a live cohort of the project, with no loop back to the cohort. */
export async function checkCohortReferences(
  db: Sql,
  nowMs: number,
  teamId: number,
  definition: { properties: PropertyGroup } | null,
  selfId: number | null,
): Promise<void> {
  if (!definition) return;
  // A cohort being created has no id yet: 0 names no cohort.
  const self: CohortDefinition = { id: selfId ?? 0, name: '', isStatic: false, properties: definition.properties };
  try {
    cohortMembershipSql(self.id, await definitionsWith(db, teamId, self), 'id', { params: new QueryParams(), teamParam: '{team:Int64}', nowMs });
  } catch (error) {
    if (error instanceof UnknownCohortError) {
      throw cohortRefusal(error, 'filters', selfId, selfId !== null && referencedCohortIds(definition.properties).includes(selfId));
    }
    throw error;
  }
}

/** SQL for "the `person` row `id` is a member of the cohort", with its parameters and the bound team. */
export async function cohortMembership(db: Sql, cohort: CohortRow, nowMs: number): Promise<CohortMembership> {
  const definitions = await definitionsWith(db, cohort.team_id, cohortDefinitionOf(cohort));
  const params = new QueryParams();
  const team = params.add(cohort.team_id, 'Int64');
  try {
    return { params, team, members: cohortMembershipSql(cohort.id, definitions, 'id', { params, teamParam: team, nowMs }) };
  } catch (error) {
    // A cohort this one names was deleted since it was written.
    if (error instanceof UnknownCohortError) throw cohortRefusal(error, 'filters', cohort.id, false);
    throw error;
  }
}

/** The cohort and every cohort that names it, directly or through others. */
export function cohortsContaining(definitions: ReadonlyMap<number, CohortDefinition>, cohortId: number): number[] {
  const containing = new Set([cohortId]);
  for (let grew = true; grew;) {
    grew = false;
    for (const definition of definitions.values()) {
      if (!containing.has(definition.id) && referencedCohortIds(definition.properties).some((id) => containing.has(id))) {
        containing.add(definition.id);
        grew = true;
      }
    }
  }
  return [...containing];
}
