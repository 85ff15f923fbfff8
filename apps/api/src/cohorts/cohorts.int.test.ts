import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, testEventRow, updateTestPersonCopy, type TestPerson } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const HOUR = 3_600_000;

describe('cohorts: CRUD, membership and cohorts in trends', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  const base = '/api/projects/1/cohorts';
  let pro: TestPerson;
  let free: TestPerson;
  let downgraded: TestPerson;
  let deleted: TestPerson;

  beforeAll(async () => {
    f = await createFlagFixture('cohorts', () => NOW);
    pro = await createTestPerson(f, { distinctIds: ['d1'], properties: { plan: 'pro' } });
    free = await createTestPerson(f, { distinctIds: ['d2'], properties: { plan: 'free' } });
    downgraded = await createTestPerson(f, { distinctIds: ['d3'], properties: { plan: 'pro' } });
    deleted = await createTestPerson(f, { distinctIds: ['d4'], properties: { plan: 'pro' } });
    // The latest copies: d3 moved to the free plan, d4's person was deleted.
    await updateTestPersonCopy(f.ch, downgraded, { version: 2, properties: { plan: 'free' } });
    await updateTestPersonCopy(f.ch, deleted, { version: 2, properties: { plan: 'pro' }, deleted: true });
    // One event per distinct id per hour for the last three hours: 3 events per person.
    await insertEvents(
      f.ch,
      ['d1', 'd2', 'd3', 'd4'].flatMap((distinctId) => [1, 2, 3].map((h) => testEventRow({ event: 'click', atMs: NOW - h * HOUR, distinctId }))),
    );
    await f.addKey('phx_cohort_reader', ['cohort:read', 'insight:read']);
  });
  afterAll(() => f.close());

  const proFilters = { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] } };
  const trendCount = async (body: Record<string, unknown>) => {
    const res = await request(f.app)
      .post('/api/projects/1/insights/trend/')
      .set(admin)
      .send({ events: [{ id: 'click' }], ...body });
    return res;
  };

  it('a dynamic cohort counts persons by their latest properties, deleted persons left out', async () => {
    const res = await request(f.app).post(`${base}/`).set(admin).send({ name: 'Pro users', filters: proFilters });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Pro users', is_static: false, count: 1, deleted: false, filters: proFilters, created_by: { id: f.adminUserId } });
    expect(f.flagChanges).toContain(1);
    const persons = await request(f.app).get(`${base}/${res.body.id}/persons/`).set(admin);
    expect(persons.body.results.map((p: { uuid: string }) => p.uuid)).toEqual([pro.uuid]);
  });

  it('a static cohort takes person uuids and distinct ids, and cohorts nest', async () => {
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'Hand-picked', is_static: true, _create_static_person_ids: [free.uuid], distinct_ids: ['d3'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ is_static: true, count: 2 });
    const added = await request(f.app)
      .patch(`${base}/${created.body.id}/add_persons_to_static_cohort/`)
      .set(admin)
      .send({ person_ids: [pro.uuid] });
    expect(added.status).toBe(200);
    expect((await request(f.app).get(`${base}/${created.body.id}/`).set(admin)).body.count).toBe(3);
    await request(f.app).patch(`${base}/${created.body.id}/remove_person_from_static_cohort/`).set(admin).send({ person_id: pro.uuid });
    const afterRemoval = await request(f.app).get(`${base}/${created.body.id}/persons/`).set(admin);
    expect(afterRemoval.body.results.map((p: { uuid: string }) => p.uuid).sort()).toEqual([free.uuid, downgraded.uuid].sort());

    const list = await request(f.app).get(`${base}/`).set(admin);
    const proId = list.body.results.find((c: { name: string }) => c.name === 'Pro users').id;
    const either = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({
        name: 'Either',
        filters: {
          properties: {
            type: 'OR',
            values: [
              { key: 'id', value: proId, type: 'cohort' },
              { key: 'id', value: created.body.id, type: 'cohort' },
            ],
          },
        },
      });
    expect(either.status).toBe(201);
    expect(either.body.count).toBe(3);
  });

  it('trends filter and break down by cohort', async () => {
    const cohorts = (await request(f.app).get(`${base}/`).set(admin)).body.results as { id: number; name: string }[];
    const id = (name: string) => cohorts.find((c) => c.name === name)!.id;
    const filtered = await trendCount({ properties: [{ key: 'id', value: id('Pro users'), type: 'cohort' }] });
    expect(filtered.status).toBe(200);
    expect(filtered.body.result[0].count).toBe(3);
    const excluded = await trendCount({ properties: [{ key: 'id', value: id('Hand-picked'), type: 'cohort', operator: 'not_in' }] });
    // Everyone but d2 and d3: d1 and the deleted person's d4 still have events.
    expect(excluded.body.result[0].count).toBe(6);
    const broken = await trendCount({ breakdown: [id('Pro users'), id('Hand-picked'), 'all'], breakdown_type: 'cohort' });
    expect(broken.status).toBe(200);
    // With "all" in the list each cohort is its own query, so PostHog names the series in the
    // label (test_trends.py test_breakdown_by_cohort).
    expect(broken.body.result.map((s: { label: string; breakdown_value: unknown; count: number }) => [s.label, s.breakdown_value, s.count])).toEqual([
      ['click - Pro users', id('Pro users'), 3],
      ['click - Hand-picked', id('Hand-picked'), 6],
      ['click - all users', 'all', 12],
    ]);
  });

  it('refuses unknown and self-referencing cohorts, and wrong shapes, with 400s', async () => {
    const unknown = await trendCount({ properties: [{ key: 'id', value: 999_999, type: 'cohort' }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'cohort_does_not_exist', attr: 'properties' });
    const unknownRef = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'x', filters: { properties: { type: 'AND', values: [{ key: 'id', value: 424242, type: 'cohort' }] } } });
    expect(unknownRef.body).toMatchObject({ code: 'cohort_does_not_exist', attr: 'filters' });
    const created = await request(f.app).post(`${base}/`).set(admin).send({ name: 'self', filters: proFilters });
    const self = await request(f.app)
      .patch(`${base}/${created.body.id}/`)
      .set(admin)
      .send({ filters: { properties: { type: 'AND', values: [{ key: 'id', value: created.body.id, type: 'cohort' }] } } });
    expect(self.status).toBe(400);
    expect(self.body.detail).toBe('A cohort cannot contain itself.');
    const behavioral = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'b', filters: { properties: { type: 'AND', values: [{ key: '$pageview', value: 'performed_event', type: 'behavioral' }] } } });
    expect(behavioral.status).toBe(400);
    expect(behavioral.body.detail).toMatch(/behavioral/);
    expect((await request(f.app).post(`${base}/`).set(admin).send({ filters: proFilters })).body).toMatchObject({ attr: 'name', code: 'required' });
    expect((await request(f.app).post(`${base}/`).set(admin).send({ name: 'n' })).body).toMatchObject({ attr: 'filters', code: 'required' });
  });

  it('soft-deletes with PATCH, answers DELETE with 405, and keeps scopes and projects apart', async () => {
    const created = await request(f.app).post(`${base}/`).set(admin).send({ name: 'temporary', filters: proFilters });
    expect((await request(f.app).delete(`${base}/${created.body.id}/`).set(admin)).status).toBe(405);
    const gone = await request(f.app).patch(`${base}/${created.body.id}/`).set(admin).send({ deleted: true });
    expect(gone.body.deleted).toBe(true);
    const list = await request(f.app).get(`${base}/`).set(admin);
    expect(list.body.results.map((c: { id: number }) => c.id)).not.toContain(created.body.id);
    expect((await request(f.app).post(`${base}/`).set(bearer('phx_cohort_reader')).send({ name: 'x', filters: proFilters })).status).toBe(403);
    expect((await request(f.app).get(`${base}/`).set(bearer('phx_cohort_reader'))).status).toBe(200);
    expect((await request(f.app).get(`/api/projects/1/cohorts/999999/`).set(admin)).status).toBe(404);
  });
  /** ClickHouse's copy of a static cohort's members: the latest row per person, removed ones left out. */
  const copiedMembers = async (cohortId: number) =>
    (
      await (
        await f.ch.query({
          query: `SELECT toString(person_id) AS id FROM person_static_cohort WHERE team_id = 1 AND cohort_id = {cohort:Int64}
                  GROUP BY person_id HAVING argMax(is_deleted, version) = 0 ORDER BY id`,
          query_params: { cohort: cohortId },
          format: 'JSONEachRow',
        })
      ).json<{ id: string }>()
    ).map((r) => r.id);
  const memberUuids = async (cohortId: number) =>
    ((await request(f.app).get(`${base}/${cohortId}/persons/`).set(admin)).body.results as { uuid: string }[]).map((p) => p.uuid).sort();

  it('takes a CSV upload on create and on PATCH, and copies the members to ClickHouse', async () => {
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .field('name', 'Uploaded')
      .field('is_static', 'true')
      .attach('csv', Buffer.from('d1\nd2\nnobody\n'), 'ids.csv');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Uploaded', is_static: true, count: 2, cohort_type: 'static' });
    expect(await copiedMembers(created.body.id)).toEqual([pro.uuid, free.uuid].sort());
    expect(await memberUuids(created.body.id)).toEqual([pro.uuid, free.uuid].sort());

    const patched = await request(f.app)
      .patch(`${base}/${created.body.id}/`)
      .set(admin)
      .field('description', 'from a CRM export')
      .attach('csv', Buffer.from(`name,person_id\nDee,${downgraded.uuid}\n`), 'export.csv');
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ description: 'from a CRM export', count: 3 });
    expect(await copiedMembers(created.body.id)).toEqual([pro.uuid, free.uuid, downgraded.uuid].sort());

    const dynamicCsv = await request(f.app).post(`${base}/`).set(admin).field('name', 'x').attach('csv', Buffer.from('d1\n'), 'ids.csv');
    expect(dynamicCsv.status).toBe(400);
    expect(dynamicCsv.body).toMatchObject({ attr: 'csv' });
    const noIds = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .field('name', 'x')
      .field('is_static', 'true')
      .attach('csv', Buffer.from('name,plan\n'), 'x.csv');
    expect(noIds.body).toMatchObject({ type: 'validation_error', attr: 'csv' });
    const badJson = await request(f.app).post(`${base}/`).set(admin).field('name', 'x').field('filters', '{"properties":');
    expect(badJson.body).toMatchObject({ attr: 'filters', detail: 'Value must be valid JSON.' });
  });

  it('adds static members by distinct id or uuid with PostHog checks, and removes them', async () => {
    const team = await createTestPerson(f, { distinctIds: ['d5', 'd5-alias'], properties: { plan: 'team', email: 'five@x.io' } });
    const created = await request(f.app).post(`${base}/`).set(admin).send({ name: 'By hand', is_static: true });
    expect(created.body.count).toBe(0);
    const add = (body: object) => request(f.app).patch(`${base}/${created.body.id}/add_persons_to_static_cohort/`).set(admin).send(body);
    expect((await add({ distinct_ids: ['d5-alias'] })).body).toEqual({ success: true });
    expect(await copiedMembers(created.body.id)).toEqual([team.uuid]);
    const persons = (await request(f.app).get(`${base}/${created.body.id}/persons/`).set(admin)).body.results;
    expect(persons).toEqual([expect.objectContaining({ uuid: team.uuid, name: 'five@x.io', distinct_ids: ['d5', 'd5-alias'], type: 'person' })]);

    expect((await add({ person_ids: ['not-a-uuid'] })).body).toMatchObject({ attr: 'person_ids__0', detail: 'Must be a valid UUID.' });
    expect((await add({ person_ids: [] })).body).toMatchObject({ detail: 'person_ids cannot be empty' });
    expect((await add({ person_ids: ['00000000-0000-4000-8000-000000000000'] })).body).toMatchObject({ detail: 'No valid users to add to cohort' });
    expect((await add({ person_ids: 'x' })).status).toBe(400);

    const remove = (personId: string) =>
      request(f.app).patch(`${base}/${created.body.id}/remove_person_from_static_cohort/`).set(admin).send({ person_id: personId });
    expect((await remove(pro.uuid)).status).toBe(404);
    expect((await remove('nope')).status).toBe(400);
    expect((await remove(team.uuid)).body).toEqual({ success: true });
    expect(await copiedMembers(created.body.id)).toEqual([]);
    expect((await request(f.app).get(`${base}/${created.body.id}/`).set(admin)).body.count).toBe(0);

    const list = (query: string) => request(f.app).get(`${base}/?${query}`).set(admin);
    const statics = (await list('type=static')).body.results as { is_static: boolean; name: string }[];
    expect(statics.length).toBeGreaterThan(0);
    expect(statics.every((c) => c.is_static)).toBe(true);
    expect(((await list('type=dynamic')).body.results as { is_static: boolean }[]).every((c) => !c.is_static)).toBe(true);
    expect(((await list('search=BY HAN')).body.results as { name: string }[]).map((c) => c.name)).toEqual(['By hand']);
  });

  it('converts legacy groups, and decide evaluates cohorts made through the API', async () => {
    const legacy = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'Legacy pro', groups: [{ properties: [{ key: 'plan', value: 'pro' }] }] });
    expect(legacy.status).toBe(201);
    expect(legacy.body).toMatchObject({
      groups: [],
      count: 1,
      filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] }] } },
    });
    const flag = await request(f.app)
      .post('/api/projects/1/feature_flags/')
      .set(admin)
      .send({ key: 'legacy-pro', filters: { groups: [{ properties: [{ key: 'id', value: legacy.body.id, type: 'cohort' }], rollout_percentage: 100 }] } });
    expect(flag.status).toBe(201);
    const token = (await f.db.query<{ api_token: string }>('SELECT api_token FROM projects WHERE id = 1'))[0]!.api_token;
    const enabled = async (distinctId: string) =>
      (await request(f.app).post('/flags/?v=2').send({ token, distinct_id: distinctId }).expect(200)).body.flags['legacy-pro'].enabled;
    // d1's stored properties are on pro; d2's on free.
    expect(await enabled('d1')).toBe(true);
    expect(await enabled('d2')).toBe(false);

    // A cohort an active flag uses, directly or inside another cohort, cannot be deleted.
    const outer = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'Outer', filters: { properties: { type: 'AND', values: [{ key: 'id', value: legacy.body.id, type: 'cohort' }] } } });
    await request(f.app)
      .post('/api/projects/1/feature_flags/')
      .set(admin)
      .send({
        key: 'outer-flag',
        name: 'Outer flag',
        filters: { groups: [{ properties: [{ key: 'id', value: outer.body.id, type: 'cohort' }], rollout_percentage: 100 }] },
      })
      .expect(201);
    const refused = await request(f.app).patch(`${base}/${legacy.body.id}/`).set(admin).send({ deleted: true });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe(
      'This cohort is used in 2 active feature flag(s): legacy-pro, Outer flag. Please remove the cohort from these feature flags before deleting it.',
    );
    expect((await request(f.app).get(`${base}/${legacy.body.id}/`).set(admin)).body.deleted).toBe(false);
  });

  it("answers 404 for another project's cohort, and the persons list needs person:read", async () => {
    const [org] = await f.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    const [other] = await f.db.query<{ id: number }>(
      "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'other', 'phc_cohorts_other') RETURNING id",
      [org!.organization_id],
    );
    const [theirs] = await f.db.query<{ id: number }>("INSERT INTO cohorts (team_id, name, is_static) VALUES ($1, 'theirs', true) RETURNING id", [other!.id]);
    expect((await request(f.app).get(`${base}/${theirs!.id}/`).set(admin)).status).toBe(404);
    expect((await request(f.app).patch(`${base}/${theirs!.id}/`).set(admin).send({ name: 'mine' })).status).toBe(404);
    expect((await request(f.app).get(`${base}/${theirs!.id}/persons/`).set(admin)).status).toBe(404);
    expect(
      (
        await request(f.app)
          .patch(`${base}/${theirs!.id}/add_persons_to_static_cohort/`)
          .set(admin)
          .send({ distinct_ids: ['d1'] })
      ).status,
    ).toBe(404);
    const nested = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'x', filters: { properties: { type: 'AND', values: [{ key: 'id', value: theirs!.id, type: 'cohort' }] } } });
    expect(nested.body).toMatchObject({ code: 'cohort_does_not_exist', attr: 'filters' });
    expect((await f.db.query<{ name: string }>('SELECT name FROM cohorts WHERE id = $1', [theirs!.id]))[0]!.name).toBe('theirs');

    const someCohort = (await request(f.app).get(`${base}/`).set(admin)).body.results[0].id;
    const reader = bearer('phx_cohort_reader');
    expect((await request(f.app).get(`${base}/${someCohort}/`).set(reader)).status).toBe(200);
    const persons = await request(f.app).get(`${base}/${someCohort}/persons/`).set(reader);
    expect(persons.status).toBe(403);
    expect(persons.body.detail).toBe("API key missing required scope 'person:read'");
  });
});
