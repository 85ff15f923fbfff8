import request from 'supertest';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-03-01T12:00:00Z');
const FLAGS = '/api/projects/1/feature_flags';

/** The embedded mode keeps flags in PGlite: the same API must hold there (the SQL is shared). */
describe('feature flags management API on PGlite', () => {
  let f: FlagFixture;
  const auth = bearer(ADMIN_KEY);
  beforeAll(async () => {
    f = await createFlagFixture('flags_pglite', () => NOW, 'pglite');
  });
  afterAll(() => f.close());

  it('creates, lists, updates, soft-deletes, logs and reports status', async () => {
    const created = await request(f.app)
      .post(`${FLAGS}/`)
      .set(auth)
      .send({
        key: 'embedded',
        filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }], payloads: { true: { a: 1 } } },
      });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ version: 1, is_simple_flag: false, rollout_percentage: null, usage_dashboard: expect.any(Number) });
    const duplicate = await request(f.app).post(`${FLAGS}/`).set(auth).send({ key: 'embedded' });
    expect(duplicate.body).toMatchObject({ code: 'unique', attr: 'key' });

    const list = await request(f.app).get(`${FLAGS}/`).query({ search: 'EMB', type: 'boolean', active: 'true' }).set(auth);
    expect(list.body).toMatchObject({ count: 1, results: [{ key: 'embedded', filters: { payloads: { true: '{"a":1}' } } }] });

    const patched = await request(f.app).patch(`${FLAGS}/${created.body.id}/`).set(auth).send({ deleted: true });
    expect(patched.body).toMatchObject({ deleted: true, version: 2 });
    expect((await request(f.app).get(`${FLAGS}/`).set(auth)).body.count).toBe(0);
    expect(f.flagChanges).toEqual([1, 1]);

    const activity = await request(f.app).get(`${FLAGS}/${created.body.id}/activity/`).set(auth);
    expect(activity.body.results.map((r: { activity: string }) => r.activity)).toEqual(['deleted', 'created']);
    expect((await request(f.app).get(`${FLAGS}/${created.body.id}/status/`).set(auth)).body).toEqual({ status: 'deleted', reason: 'Flag has been deleted' });
    expect((await request(f.app).delete(`${FLAGS}/${created.body.id}/`).set(auth)).status).toBe(405);
  });
});
