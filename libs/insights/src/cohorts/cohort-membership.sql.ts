import { compilePropertyGroup, type PropertyGroup, type QueryParams } from '@sightline/properties';

/** A cohort as queries need it: static (stored members) or dynamic (a person-property group). */
export interface CohortDefinition {
  id: number;
  name: string;
  isStatic: boolean;
  /** Dynamic cohorts' person-property group (filters.properties); null for static ones. */
  properties: PropertyGroup | null;
}

export class UnknownCohortError extends Error {
  constructor(readonly cohortId: number) {
    super(`Cohort ${cohortId} does not exist in this project.`);
  }
}

export interface CohortSqlContext {
  params: QueryParams;
  /** A placeholder already bound to the project id, e.g. `{p0:Int64}`. */
  teamParam: string;
  nowMs: number;
}

/** Cohorts inside cohorts nest at most this deep (a cycle is refused long before). */
const MAX_DEPTH = 8;

/**
 * SQL for "the person `personIdSql` is in cohort `cohortId`": static cohorts through
 * person_static_cohort, dynamic ones by matching the person's current properties (the latest
 * version in the `person` table) against the cohort's group, cohorts inside it included.
 */
export function cohortMembershipSql(
  cohortId: number,
  cohorts: ReadonlyMap<number, CohortDefinition>,
  personIdSql: string,
  ctx: CohortSqlContext,
  visiting: readonly number[] = [],
): string {
  const cohort = cohorts.get(cohortId);
  if (!cohort) throw new UnknownCohortError(cohortId);
  if (visiting.includes(cohortId) || visiting.length >= MAX_DEPTH) throw new UnknownCohortError(cohortId);
  const id = ctx.params.add(cohortId, 'Int64');
  if (cohort.isStatic) {
    return `${personIdSql} IN (SELECT person_id FROM person_static_cohort WHERE team_id = ${ctx.teamParam} AND cohort_id = ${id}
      GROUP BY person_id HAVING argMax(is_deleted, version) = 0)`;
  }
  const properties = cohort.properties ?? { type: 'AND', values: [] };
  const match = compilePropertyGroup(properties, {
    params: ctx.params,
    nowMs: ctx.nowMs,
    // Person filters read the person's latest properties; nothing else applies to a person.
    propertiesColumn: (filter) => ((filter.type ?? 'person') === 'person' ? 'argMax(properties, version)' : null),
    cohortMembership: (inner) => cohortMembershipSql(inner, cohorts, 'id', ctx, [...visiting, cohortId]),
  });
  return `${personIdSql} IN (SELECT id FROM person WHERE team_id = ${ctx.teamParam}
      GROUP BY id HAVING argMax(is_deleted, version) = 0 AND ${match})`;
}
