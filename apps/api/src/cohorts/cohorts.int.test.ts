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
    expect(broken.body.result.map((s: { label: string; breakdown_value: unknown; count: number }) => [s.label, s.breakdown_value, s.count])).toEqual([
      ['Pro users', id('Pro users'), 3],
      ['Hand-picked', id('Hand-picked'), 6],
      ['all users', 'all', 12],
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
});
