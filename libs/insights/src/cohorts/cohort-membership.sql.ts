import { compilePropertyGroup, isPropertyGroup, type CompileContext, type PropertyFilter, type PropertyGroup, type QueryParams } from '@sightline/properties';

/** A cohort as queries need it: static (stored members) or dynamic (a person-property group). */
export interface CohortDefinition {
  id: number;
  name: string;
  isStatic: boolean;
  /** Dynamic cohorts' person-property group (filters.properties); null for static ones. */
  properties: PropertyGroup | null;
}

/** Cohorts inside cohorts nest at most this deep (PostHog's own limit is lower in practice). */
export const MAX_COHORT_NESTING = 8;

/**
 * A cohort a query or a cohort names cannot be used: it does not exist in the project (or is
 * deleted), it contains itself through other cohorts, or cohorts nest past MAX_COHORT_NESTING.
 */
export class UnknownCohortError extends Error {
  constructor(
    readonly cohortId: number,
    readonly reason: 'unknown' | 'cycle' | 'too_deep' = 'unknown',
  ) {
    super(
      reason === 'cycle'
        ? 'Cohorts cannot reference other cohorts in a loop.'
        : reason === 'too_deep'
          ? `Cohorts cannot nest more than ${MAX_COHORT_NESTING} deep.`
          : `Cohort ${cohortId} does not exist in this project.`,
    );
  }
}

export interface CohortSqlContext {
  params: QueryParams;
  /** A placeholder already bound to the project id, e.g. `{p0:Int64}`. */
  teamParam: string;
  nowMs: number;
}

/** Every cohort id a property group names, however deeply nested. */
export function referencedCohortIds(group: PropertyGroup | null): number[] {
  if (!group) return [];
  const ids = group.values.flatMap((node): number[] => {
    if (isPropertyGroup(node)) return referencedCohortIds(node);
    const id = Number(node.value);
    return node.type === 'cohort' && Number.isInteger(id) ? [id] : [];
  });
  return [...new Set(ids)];
}

/**
 * SQL for "the person `personIdSql` is in cohort `cohortId`": static cohorts through
 * person_static_cohort, dynamic ones by matching the person's current properties (the latest
 * version in the `person` table, deleted persons left out) against the cohort's group, cohorts
 * inside it included. `personIdSql` is a person uuid expression of the caller's query.
 */
export function cohortMembershipSql(
  cohortId: number,
  cohorts: ReadonlyMap<number, CohortDefinition>,
  personIdSql: string,
  ctx: CohortSqlContext,
  visiting: readonly number[] = [],
): string {
  if (visiting.includes(cohortId)) throw new UnknownCohortError(cohortId, 'cycle');
  if (visiting.length >= MAX_COHORT_NESTING) throw new UnknownCohortError(cohortId, 'too_deep');
  const cohort = cohorts.get(cohortId);
  if (!cohort) throw new UnknownCohortError(cohortId);
  if (cohort.isStatic) {
    return `${personIdSql} IN (SELECT person_id FROM person_static_cohort WHERE team_id = ${ctx.teamParam} AND cohort_id = ${ctx.params.add(cohortId, 'Int64')}
      GROUP BY person_id HAVING argMax(is_deleted, version) = 0)`;
  }
  // A dynamic cohort whose stored filters are not a property group (written outside the API,
  // which refuses such filters) has no members, as the flag engine reads it (libs/flags
  // isInCohort); read as an empty group it would hold every person.
  if (!cohort.properties) return '0';
  const compile: CompileContext = {
    params: ctx.params,
    nowMs: ctx.nowMs,
    // Person filters read the person's latest properties; nothing else applies to a person.
    propertiesColumn: (filter) => ((filter.type ?? 'person') === 'person' ? 'argMax(properties, version)' : null),
    cohortMembership: (inner) => cohortMembershipSql(inner, cohorts, 'id', ctx, [...visiting, cohortId]),
  };
  const match = personGroupSql(cohort.properties, compile);
  return `${personIdSql} IN (SELECT id FROM person WHERE team_id = ${ctx.teamParam}
      GROUP BY id HAVING argMax(is_deleted, version) = 0 AND ${match})`;
}

const isNegatedPersonFilter = (node: PropertyGroup | PropertyFilter): node is PropertyFilter =>
  !isPropertyGroup(node) && node.negation === true && node.type !== 'cohort';

const hasNegatedPersonFilter = (group: PropertyGroup): boolean =>
  group.values.some((node) => (isPropertyGroup(node) ? hasNegatedPersonFilter(node) : isNegatedPersonFilter(node)));

/**
 * A cohort's group as SQL. Cohorts (like the flag engine, libs/flags) honour `negation` on a
 * person filter, which the shared compiler leaves to cohort filters; such a filter is compiled
 * on its own and inverted, a missing or non-numeric property (NULL) counting as "no match", so
 * the negation holds for it. Groups without one go to the compiler whole.
 */
function personGroupSql(group: PropertyGroup, ctx: CompileContext): string {
  if (!hasNegatedPersonFilter(group)) return compilePropertyGroup(group, ctx);
  const parts = group.values.map((node) => {
    if (isPropertyGroup(node)) return personGroupSql(node, ctx);
    const single = (filter: PropertyFilter) => compilePropertyGroup({ type: 'AND', values: [filter] }, ctx);
    return isNegatedPersonFilter(node) ? `NOT ifNull(${single({ ...node, negation: false })}, 0)` : single(node);
  });
  if (parts.length === 0) return '1';
  return parts.length === 1 ? parts[0]! : `(${parts.join(group.type === 'OR' ? ' OR ' : ' AND ')})`;
}
