/**
 * The cohort services that took their rules out of the route handlers, called directly on real
 * PostgreSQL and ClickHouse: counting and telling decide after a write, the refusal to delete a
 * cohort active flags use (through cohorts naming it), and static members' refusals.
 */
import { randomUUID } from 'node:crypto';
import { findCohort } from '@sightline/insights';
import { createTestPerson, createTestStores, insertFlag, type TestStores } from '@sightline/testkit';
import { activeFlagsNamingCohorts } from '../feature-flags';
import { addPersonsToStaticCohort, createCohort, editCohort, removePersonFromStaticCohort, type CohortsDeps } from './cohorts.service';

const NOW = Date.parse('2026-01-10T12:00:00Z');
const byPlan = (value: string) => ({
  properties: { type: 'AND' as const, values: [{ key: 'plan', type: 'person' as const, value, operator: 'exact' as const }] },
});
const naming = (cohortId: number) => ({
  properties: { type: 'AND' as const, values: [{ key: 'id', type: 'cohort' as const, value: cohortId, operator: 'exact' as const }] },
});

describe('cohort services', () => {
  let stores: TestStores;
  let deps: CohortsDeps;
  const told: string[] = [];
  let userId: number;

  beforeAll(async () => {
    stores = await createTestStores('cohortservices');
    userId = (await stores.db.query<{ id: number }>('SELECT id FROM users ORDER BY id LIMIT 1'))[0]!.id;
    deps = {
      db: stores.db,
      ch: stores.ch,
      now: () => NOW,
      flagChanges: { flagsChanged: async (teamId) => void told.push(`flags ${teamId}`) },
      personsChanged: async (teamId) => void told.push(`persons ${teamId}`),
      flagsNamingCohorts: (teamId, ids) => activeFlagsNamingCohorts(stores.db, teamId, ids),
    };
  });
  afterAll(() => stores.close());
  beforeEach(() => (told.length = 0));

  it('counts a new dynamic cohort and tells decide', async () => {
    for (const plan of ['pro', 'pro', 'free']) await createTestPerson(stores, { properties: { plan } });
    const cohort = await createCohort(deps, 1, userId, { name: 'pro', filters: byPlan('pro'), is_static: false }, null);
    expect(cohort).toMatchObject({ name: 'pro', count: 2, is_static: false, created_by_id: userId });
    expect(new Date(cohort.last_calculation!).getTime()).toBe(NOW);
    expect(told).toEqual(['flags 1', 'persons 1']);
  });

  it('refuses to delete a cohort an active flag uses through a cohort naming it, and deletes it once the flag is off', async () => {
    const inner = await createCohort(deps, 1, userId, { name: 'inner', filters: byPlan('free'), is_static: false }, null);
    const outer = await createCohort(deps, 1, userId, { name: 'outer', filters: naming(inner.id), is_static: false }, null);
    const flagId = await insertFlag(stores.db, 1, {
      key: 'uses-outer',
      name: 'Uses outer',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: outer.id }], rollout_percentage: 100 }] },
    });
    await expect(editCohort(deps, inner, { deleted: true }, null)).rejects.toMatchObject({
      status: 400,
      detail: 'This cohort is used in 1 active feature flag(s): Uses outer. Please remove the cohort from these feature flags before deleting it.',
    });
    expect((await findCohort(stores.db, 1, inner.id))!.deleted).toBe(false);

    await stores.db.query('UPDATE feature_flags SET active = false WHERE id = $1', [flagId]);
    told.length = 0;
    expect(await editCohort(deps, inner, { deleted: true }, null)).toMatchObject({ id: inner.id, deleted: true });
    expect(told).toEqual(['flags 1', 'persons 1']);
  });

  it('refuses static members that name no person of the project, and removing a person not in the cohort', async () => {
    const cohort = await createCohort(deps, 1, userId, { name: 'static', filters: null, is_static: true }, null);
    told.length = 0;
    await expect(addPersonsToStaticCohort(deps, cohort, { personUuids: [randomUUID()], distinctIds: ['nobody'] })).rejects.toMatchObject({
      status: 400,
      detail: 'No valid users to add to cohort',
    });
    await expect(removePersonFromStaticCohort(deps, cohort, randomUUID())).rejects.toMatchObject({ status: 404, detail: 'Person is not part of the cohort' });
    expect(told).toEqual([]);
  });
});
