import { QueryParams, type PropertyGroup } from '@sightline/properties';
import { cohortMembershipSql, MAX_COHORT_NESTING, referencedCohortIds, UnknownCohortError, type CohortDefinition } from './cohort-membership.sql';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const dynamic = (id: number, properties: PropertyGroup): [number, CohortDefinition] => [id, { id, name: `c${id}`, isStatic: false, properties }];
const cohortFilter = (id: number, extra: Record<string, unknown> = {}) => ({ key: 'id', value: id, type: 'cohort', ...extra });

const COHORTS = new Map<number, CohortDefinition>([
  [1, { id: 1, name: 'static', isStatic: true, properties: null }],
  dynamic(2, { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] }),
  dynamic(3, {
    type: 'AND',
    values: [cohortFilter(1), cohortFilter(2, { operator: 'not_in' }), { key: 'age', value: 30, operator: 'gt', type: 'person', negation: true }],
  }),
  dynamic(4, { type: 'AND', values: [cohortFilter(5)] }),
  dynamic(5, { type: 'OR', values: [cohortFilter(4)] }),
  dynamic(6, { type: 'AND', values: [cohortFilter(99)] }),
  dynamic(7, { type: 'AND', values: [cohortFilter(7)] }),
]);

function compile(cohortId: number, cohorts: ReadonlyMap<number, CohortDefinition> = COHORTS) {
  const params = new QueryParams();
  const teamParam = params.add(1, 'Int64');
  const sql = cohortMembershipSql(cohortId, cohorts, 'e.person_id', { params, teamParam, nowMs: NOW });
  return { sql, params: params.values };
}

function refusal(cohortId: number, cohorts: ReadonlyMap<number, CohortDefinition> = COHORTS): UnknownCohortError {
  try {
    compile(cohortId, cohorts);
  } catch (error) {
    if (error instanceof UnknownCohortError) return error;
    throw error;
  }
  throw new Error(`cohort ${cohortId} compiled`);
}

describe('cohortMembershipSql', () => {
  it('tests a static cohort against person_static_cohort, the latest row per person deciding', () => {
    const { sql, params } = compile(1);
    expect(sql).toMatchSnapshot();
    expect(params).toEqual({ p0: 1, p1: 1 });
  });

  it("tests a dynamic cohort against live persons' latest properties, every value bound", () => {
    const { sql, params } = compile(2);
    expect(sql).toMatchSnapshot();
    expect(sql).toContain('argMax(properties, version)');
    expect(sql).toContain('HAVING argMax(is_deleted, version) = 0');
    expect(params).toEqual({ p0: 1, p1: 'plan', p2: 'pro' });
  });

  it('nests cohorts (not_in as NOT) and inverts a negated person filter with a missing value counting as no match', () => {
    const { sql, params } = compile(3);
    expect(sql).toMatchSnapshot();
    expect(sql).toMatch(/NOT \(id IN \(SELECT id FROM person/);
    expect(sql).toMatch(/NOT ifNull\(.*> \{p\d+:Float64\}, 0\)/);
    // The team, then the static cohort's id, cohort 2's filter, then the age filter.
    expect(params).toEqual({ p0: 1, p1: 1, p2: 'plan', p3: 'pro', p4: 'age', p5: 30 });
  });

  it('refuses an unknown cohort, a loop and a cohort that contains itself, by id and reason', () => {
    expect(refusal(404)).toMatchObject({ cohortId: 404, reason: 'unknown' });
    expect(refusal(6)).toMatchObject({ cohortId: 99, reason: 'unknown' });
    expect(refusal(4)).toMatchObject({ cohortId: 4, reason: 'cycle', message: 'Cohorts cannot reference other cohorts in a loop.' });
    expect(refusal(7)).toMatchObject({ cohortId: 7, reason: 'cycle' });
  });

  it(`refuses cohorts nested more than ${MAX_COHORT_NESTING} deep, and accepts exactly that many`, () => {
    const chain = (length: number) =>
      new Map<number, CohortDefinition>(
        Array.from({ length }, (_, i) =>
          i === length - 1
            ? [i + 1, { id: i + 1, name: 'last', isStatic: true, properties: null }]
            : dynamic(i + 1, { type: 'AND', values: [cohortFilter(i + 2)] }),
        ),
      );
    expect(() => compile(1, chain(MAX_COHORT_NESTING))).not.toThrow();
    expect(refusal(1, chain(MAX_COHORT_NESTING + 1))).toMatchObject({ cohortId: MAX_COHORT_NESTING + 1, reason: 'too_deep' });
  });

  it('an empty dynamic cohort has every live person', () => {
    const { sql } = compile(8, new Map([dynamic(8, { type: 'AND', values: [] })]));
    expect(sql).toMatch(/HAVING argMax\(is_deleted, version\) = 0 AND 1\)$/);
  });

  it('a dynamic cohort whose stored filters are no property group has no members, as flags read it', () => {
    const unreadable = new Map<number, CohortDefinition>([[9, { id: 9, name: 'flat list', isStatic: false, properties: null }]]);
    expect(compile(9, unreadable).sql).toBe('0');
  });
});

describe('referencedCohortIds', () => {
  it('lists every cohort a group names, nested, once', () => {
    expect(referencedCohortIds(COHORTS.get(3)!.properties)).toEqual([1, 2]);
    expect(
      referencedCohortIds({
        type: 'OR',
        values: [{ type: 'AND', values: [cohortFilter(5), { key: 'plan', value: 'x', type: 'person' }] }, cohortFilter(5), cohortFilter(6)],
      }),
    ).toEqual([5, 6]);
    expect(referencedCohortIds(null)).toEqual([]);
  });
});
