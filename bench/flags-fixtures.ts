/**
 * The decide benchmark's project: 50 flags of mixed kinds and 2,000 stored persons
 * (with groups, cohorts and static cohort members), written with the test fixtures.
 */
import type { FlagFilters, PropertyFilter } from '@sightline/flags';
import type { Sql } from '@sightline/postgres';
import { insertCohort, insertFlag, insertGroup, insertGroupType, insertPerson } from '@sightline/testkit';

export const PERSONS = 2000;
export const COMPANIES = 100;
const PLANS = ['free', 'pro', 'team', 'enterprise'];

export function personProperties(i: number): Record<string, unknown> {
  return {
    plan: PLANS[i % PLANS.length],
    email: `user${i}@${i % 3 === 0 ? 'example.com' : 'acme.io'}`,
    age: 18 + (i % 60),
    app_version: `${1 + (i % 3)}.${i % 12}.${i % 7}`,
    signup: new Date(Date.UTC(2023, 0, 1) + (i % 700) * 86_400_000).toISOString(),
    country: i % 5 === 0 ? 'GB' : 'US',
  };
}

const person = (key: string, operator: string, value: unknown): PropertyFilter => ({ key, operator, value, type: 'person' });
const variants = {
  variants: [
    { key: 'control', rollout_percentage: 34 },
    { key: 'test', rollout_percentage: 33 },
    { key: 'test-2', rollout_percentage: 33 },
  ],
};

export async function seedDecideBenchmark(db: Sql, teamId: number): Promise<void> {
  await insertGroupType(db, teamId, 'company', 0);
  for (let c = 0; c < COMPANIES; c++) await insertGroup(db, teamId, 0, `company-${c}`, { industry: c % 2 ? 'saas' : 'retail', seats: c * 7 });
  const staticMembers: number[] = [];
  for (let i = 0; i < PERSONS; i++) {
    const id = await insertPerson(db, teamId, [`user-${i}`, `anon-${i}`], personProperties(i));
    if (i % 10 === 0) staticMembers.push(id);
  }
  const staticCohort = await insertCohort(db, teamId, { isStatic: true, personIds: staticMembers });
  const dynamicCohort = await insertCohort(db, teamId, {
    isStatic: false,
    filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [person('plan', 'exact', ['pro', 'team']), person('age', 'gt', 30)] }] } },
  });

  const flags = benchmarkFlags(staticCohort, dynamicCohort);
  for (const flag of flags) await insertFlag(db, teamId, flag);
}

export type BenchmarkFlag = { key: string; filters: FlagFilters; ensureExperienceContinuity?: boolean };

/** 50 flags: rollouts, experiments, person targeting (every operator family), group, cohort, dependent, early-access, holdout and continuity flags. */
export function benchmarkFlags(staticCohort: number, dynamicCohort: number): BenchmarkFlag[] {
  const flags: BenchmarkFlag[] = [];
  for (let i = 0; i < 10; i++) flags.push({ key: `rollout-${i}`, filters: { groups: [{ properties: [], rollout_percentage: 10 * i + 5 }] } });
  for (let i = 0; i < 10; i++)
    flags.push({
      key: `experiment-${i}`,
      filters: {
        groups: [
          { properties: [person('plan', 'exact', 'enterprise')], rollout_percentage: 100, variant: 'test' },
          { properties: [], rollout_percentage: 50 + i },
        ],
        multivariate: variants,
        payloads: { control: '{"color":"blue"}', test: '{"color":"green"}' },
      },
    });
  const personFilters = [
    person('plan', 'exact', ['pro', 'enterprise']),
    person('email', 'icontains', 'example.com'),
    person('email', 'regex', '^user\\d+5@'),
    person('age', 'gte', 40),
    person('age', 'lt', 25),
    person('country', 'is_not', 'GB'),
    person('app_version', 'semver_gte', '2.5.0'),
    person('app_version', 'semver_caret', '1.2.0'),
    person('signup', 'is_date_after', '-365d'),
    person('signup', 'is_date_before', '2023-06-01'),
    person('$geoip_country_code', 'exact', 'GB'),
    person('beta', 'is_set', true),
  ];
  personFilters.forEach((filter, i) =>
    flags.push({ key: `targeted-${i}`, filters: { groups: [{ properties: [filter], rollout_percentage: 80 }], payloads: { true: '"on"' } } }),
  );
  for (let i = 0; i < 5; i++)
    flags.push({
      key: `company-${i}`,
      filters: {
        aggregation_group_type_index: 0,
        groups: [
          {
            properties: [
              { key: i % 2 ? 'industry' : 'seats', operator: i % 2 ? 'exact' : 'gt', value: i % 2 ? 'saas' : 100, type: 'group', group_type_index: 0 },
            ],
            rollout_percentage: 90,
          },
        ],
      },
    });
  for (let i = 0; i < 5; i++)
    flags.push({
      key: `cohort-${i}`,
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: i < 2 ? staticCohort : dynamicCohort }], rollout_percentage: 100 }] },
    });
  for (let i = 0; i < 3; i++)
    flags.push({
      key: `dependent-${i}`,
      filters: { groups: [{ properties: [{ key: `rollout-${i + 5}`, type: 'flag', operator: 'flag_evaluates_to', value: true }] }] },
    });
  flags.push({
    key: 'early-access',
    filters: {
      groups: [{ rollout_percentage: 0 }],
      super_groups: [{ properties: [person('$feature_enrollment/early-access', 'exact', ['true'])], rollout_percentage: 100 }],
    },
  });
  flags.push({
    key: 'holdout-experiment',
    filters: { groups: [{ rollout_percentage: 100 }], multivariate: variants, holdout: { id: 1, exclusion_percentage: 10 } },
  });
  flags.push({
    key: 'legacy-holdout',
    filters: { groups: [{ rollout_percentage: 100 }], holdout_groups: [{ properties: [], rollout_percentage: 5, variant: 'holdout' }] },
  });
  flags.push({ key: 'continuity-0', ensureExperienceContinuity: true, filters: { groups: [{ rollout_percentage: 50 }] } });
  flags.push({ key: 'continuity-1', ensureExperienceContinuity: true, filters: { groups: [{ rollout_percentage: 30 }], multivariate: variants } });
  if (flags.length !== 50) throw new Error(`expected 50 benchmark flags, built ${flags.length}`);
  return flags;
}

/** The i-th request body: mostly stored persons, some strangers, groups, a few overrides. */
export function decideRequestBody(token: string, i: number): string {
  const known = i % 10 !== 9;
  const body: Record<string, unknown> = {
    token,
    distinct_id: known ? `user-${i % PERSONS}` : `stranger-${i}`,
    groups: { company: `company-${i % COMPANIES}` },
  };
  if (i % 4 === 0) body['person_properties'] = { beta: true };
  return JSON.stringify(body);
}
