import type { DateMargin } from './dates';
import { matchProperty } from './property-match';
import type { CohortDefinition, PropertyFilter, PropertyGroup } from './types';

export class StoreUnavailableError extends Error {
  constructor(what: string) {
    super(`${what} could not be read`);
    this.name = 'StoreUnavailableError';
  }
}

export interface CohortInputs {
  cohorts: ReadonlyMap<number, CohortDefinition>;
  staticCohortIds: ReadonlySet<number>;
  now: Date;
  dateMargin?: DateMargin;
}

const isGroup = (v: PropertyGroup | PropertyFilter): v is PropertyGroup => Array.isArray((v as PropertyGroup).values);

export function cohortIdOf(filter: PropertyFilter): number | null {
  const id = typeof filter.value === 'number' ? filter.value : Number(filter.value);
  return Number.isInteger(id) ? id : null;
}

/**
 * Whether the person is in a cohort: static cohorts by stored membership, dynamic ones by
 * their property group (AND/OR, nested, per-filter negation, cohorts inside cohorts).
 * A cohort that is unknown, deleted, or part of a dependency cycle has no members.
 */
export function isInCohort(cohortId: number, properties: Record<string, unknown>, inputs: CohortInputs, visiting: Set<number> = new Set()): boolean {
  const cohort = inputs.cohorts.get(cohortId);
  if (!cohort) return false;
  if (cohort.is_static) return inputs.staticCohortIds.has(cohortId);
  if (!cohort.properties || visiting.has(cohortId)) return false;
  visiting.add(cohortId);
  try {
    return matchGroup(cohort.properties, properties, inputs, visiting);
  } finally {
    visiting.delete(cohortId);
  }
}

function matchGroup(group: PropertyGroup, properties: Record<string, unknown>, inputs: CohortInputs, visiting: Set<number>): boolean {
  const values = group.values ?? [];
  const isAnd = group.type !== 'OR';
  if (values.length === 0) return isAnd;
  for (const value of values) {
    let matched: boolean;
    if (isGroup(value)) matched = matchGroup(value, properties, inputs, visiting);
    else {
      if (value.type === 'cohort') {
        const id = cohortIdOf(value);
        matched = id !== null && isInCohort(id, properties, inputs, visiting);
      } else if (value.type === 'person' || value.type === undefined) matched = matchProperty(value, properties, inputs.now, inputs.dateMargin);
      else matched = false; // behavioural filters cannot be evaluated on the flag path
      if (value.negation) matched = !matched;
    }
    if (isAnd && !matched) return false;
    if (!isAnd && matched) return true;
  }
  return isAnd;
}
