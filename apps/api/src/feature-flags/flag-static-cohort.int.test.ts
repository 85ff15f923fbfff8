/**
 * A flag's static cohort and decide read the same definitions and the same persons: for every
 * person of the project, membership of the cohort equals the flag's value at decide.
 */
import request from 'supertest';
import { insertPerson } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

describe('static cohort for a flag agrees with decide', () => {
  let f: FlagFixture;
  let token: string;
  const persons = new Map<number, string>();

  beforeAll(async () => {
    f = await createFlagFixture('staticagree', () => Date.now());
    token = (await f.db.query<{ api_token: string }>('SELECT api_token FROM projects WHERE id = 1'))[0]!.api_token;
    for (let i = 0; i < 60; i++) {
      const distinctId = `agree-${i}`;
      // PostgreSQL returns bigint ids as text.
      persons.set(Number(await insertPerson(f.db, 1, [distinctId], { plan: i % 3 === 0 ? 'free' : 'pro', n: i })), distinctId);
    }
  });
  afterAll(() => f.close());

  it('holds exactly the persons decide enables, with conditions, a rollout and a flag dependency', async () => {
    const base = await request(f.app)
      .post('/api/projects/1/feature_flags/')
      .set(bearer(ADMIN_KEY))
      .send({ key: 'agree-base', filters: { groups: [{ properties: [{ key: 'n', type: 'person', operator: 'lt', value: '45' }], rollout_percentage: 100 }] } })
      .expect(201);
    const flag = await request(f.app)
      .post('/api/projects/1/feature_flags/')
      .set(bearer(ADMIN_KEY))
      .send({
        key: 'agree',
        filters: {
          groups: [
            {
              properties: [
                { key: 'plan', type: 'person', operator: 'exact', value: ['pro'] },
                { key: String(base.body.id), type: 'flag', operator: 'flag_evaluates_to', value: true },
              ],
              rollout_percentage: 60,
            },
          ],
        },
      })
      .expect(201);
    const cohort = await request(f.app)
      .post(`/api/projects/1/feature_flags/${flag.body.id}/create_static_cohort_for_flag/`)
      .set(bearer(ADMIN_KEY))
      .send({})
      .expect(201);
    const members = new Set(
      (await f.db.query<{ person_id: string }>('SELECT person_id::text AS person_id FROM cohort_people WHERE cohort_id = $1', [cohort.body.cohort.id])).map(
        (r) => Number(r.person_id),
      ),
    );
    const enabledAtDecide = new Set<number>();
    for (const [personId, distinctId] of persons) {
      const answer = await request(f.app).post('/flags/?v=2').send({ token, distinct_id: distinctId }).expect(200);
      if (answer.body.flags.agree?.enabled) enabledAtDecide.add(personId);
    }
    // Both sides see some persons in and some out, so agreement is not trivial.
    expect(enabledAtDecide.size).toBeGreaterThan(5);
    expect(enabledAtDecide.size).toBeLessThan(persons.size - 5);
    expect([...members].sort((a, b) => a - b)).toEqual([...enabledAtDecide].sort((a, b) => a - b));

    // Queries read the members from ClickHouse: the copy holds the same persons, by uuid.
    const uuids = (
      await f.db.query<{ uuid: string }>('SELECT p.uuid::text AS uuid FROM cohort_people c JOIN persons p ON p.id = c.person_id WHERE c.cohort_id = $1', [
        cohort.body.cohort.id,
      ])
    ).map((r) => r.uuid);
    const copied = await (
      await f.ch.query({
        query: `SELECT toString(person_id) AS uuid FROM person_static_cohort WHERE team_id = 1 AND cohort_id = {cohort:Int64}
                GROUP BY person_id HAVING argMax(is_deleted, version) = 0`,
        query_params: { cohort: cohort.body.cohort.id },
        format: 'JSONEachRow',
      })
    ).json<{ uuid: string }>();
    expect(copied.map((r) => r.uuid).sort()).toEqual(uuids.sort());
    expect(cohort.body.cohort.count).toBe(uuids.length);
  });
});
