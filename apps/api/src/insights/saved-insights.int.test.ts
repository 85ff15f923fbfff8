import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');

describe('saved insights, dashboards, my_last_viewed and timing', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  const base = '/api/environments/1/insights';
  const filters = { insight: 'TRENDS', events: [{ id: 'signup', math: 'total' }], date_from: '-7d' };

  beforeAll(async () => {
    // The clock moves a second per reading, so every view has its own time.
    let clock = NOW;
    f = await createFlagFixture('saved-insights', () => (clock += 1000));
    await f.addKey('phx_insight_reader', ['insight:read', 'dashboard:read']);
    await insertEvents(f.ch, [testEventRow({ event: 'signup', atMs: NOW }), testEventRow({ event: 'signup', atMs: NOW - 86_400_000 })]);
  });
  afterAll(() => f.close());

  it('creates, reads with its result, updates, lists by filters, and soft-deletes', async () => {
    const dashboard = await request(f.app).post('/api/environments/1/dashboards/').set(admin).send({ name: 'Growth', pinned: true });
    expect(dashboard.status).toBe(201);
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'Signups', filters, tags: ['growth'], saved: true, dashboards: [dashboard.body.id] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Signups',
      short_id: expect.stringMatching(/^[A-Za-z0-9]{8}$/),
      saved: true,
      tags: ['growth'],
      dashboards: [dashboard.body.id],
      created_by: { id: f.adminUserId },
    });

    const read = await request(f.app).get(`${base}/${created.body.id}/`).set(admin);
    const legacy = await request(f.app).post('/api/environments/1/insights/trend/').set(admin).send(filters);
    expect(read.body.result.map((s: { data: number[] }) => s.data)).toEqual(legacy.body.result.map((s: { data: number[] }) => s.data));
    expect(read.body.result[0].count).toBe(2);
    expect(read.body.last_refresh).toEqual(expect.any(String));

    const patched = await request(f.app)
      .patch(`${base}/${created.body.id}/`)
      .set(admin)
      .send({ favorited: true, description: 'daily signups', dashboards: [] });
    expect(patched.body).toMatchObject({ favorited: true, description: 'daily signups', dashboards: [], last_modified_by: { id: f.adminUserId } });
    const byShortId = await request(f.app).get(`${base}/`).query({ short_id: created.body.short_id }).set(admin);
    expect(byShortId.body.results.map((i: { id: number }) => i.id)).toEqual([created.body.id]);
    expect((await request(f.app).get(`${base}/`).query({ favorited: 'true', search: 'sign' }).set(admin)).body.count).toBe(1);
    expect((await request(f.app).get(`${base}/`).query({ tags: '["other"]' }).set(admin)).body.count).toBe(0);

    const dash = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.body.id}/`).set(admin);
    expect(dash.body.tiles).toEqual([]);

    expect((await request(f.app).delete(`${base}/${created.body.id}/`).set(admin)).status).toBe(405);
    await request(f.app).patch(`${base}/${created.body.id}/`).set(admin).send({ deleted: true });
    expect((await request(f.app).get(`${base}/`).set(admin)).body.results.map((i: { id: number }) => i.id)).not.toContain(created.body.id);
  });

  it('my_last_viewed: the caller’s last five viewed insights, most recent first', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 7; i++)
      ids.push(
        (
          await request(f.app)
            .post(`${base}/`)
            .set(admin)
            .send({ name: `insight ${i}`, filters })
        ).body.id,
      );
    for (const id of [ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6], ids[2]]) await request(f.app).get(`${base}/${id}/`).set(admin);
    const viewed = await request(f.app).get(`${base}/my_last_viewed/`).set(admin);
    expect(viewed.status).toBe(200);
    expect(viewed.body.map((i: { id: number }) => i.id)).toEqual([ids[2], ids[6], ids[5], ids[4], ids[3]]);
    expect(Object.keys(viewed.body[0]).sort()).toEqual(
      [
        'id',
        'short_id',
        'name',
        'derived_name',
        'filters',
        'query',
        'dashboards',
        'dashboard_tiles',
        'description',
        'last_refresh',
        'refreshing',
        'saved',
        'tags',
        'updated_at',
        'created_by',
        'created_at',
        'last_modified_at',
        'favorited',
        'user_access_level',
      ].sort(),
    );
    // Another user has seen nothing.
    const other = await f.addUser('other@example.com');
    await f.addKey('phx_other_user', ['insight:read'], other.id);
    expect((await request(f.app).get(`${base}/my_last_viewed/`).set(bearer('phx_other_user'))).body).toEqual([]);
  });

  it('lists insights as CSV with formulas in names and descriptions neutralised', async () => {
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: '=HYPERLINK("http://evil.example","open")', description: '@SUM(1)', filters, saved: true });
    expect(created.status).toBe(201);
    const res = await request(f.app).get(`${base}/`).query({ format: 'csv', short_id: created.body.short_id }).set(admin);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.text.split('\r\n')).toEqual([
      'id,short_id,name,derived_name,description,saved,favorited',
      `${created.body.id},${created.body.short_id},"'=HYPERLINK(""http://evil.example"",""open"")",,"'@SUM(1)",true,false`,
      '',
    ]);
    await request(f.app).patch(`${base}/${created.body.id}/`).set(admin).send({ deleted: true });
  });

  it('timing: records the report and answers 200 without a body; refuses what is not an object', async () => {
    const res = await request(f.app).post(`${base}/timing/`).set(admin).send({
      session_id: 's',
      current_url: 'http://x/insights/1',
      type: 'insight_load',
      context: 'insight',
      time_to_see_data_ms: 420,
      insights_fetched: 1,
      insights_fetched_cached: 0,
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    const rows = await (await f.ch.query({ query: 'SELECT type, time_to_see_data_ms FROM insight_timings', format: 'JSONEachRow' })).json();
    expect(rows).toEqual([{ type: 'insight_load', time_to_see_data_ms: 420 }]);
    const bad = await request(f.app).post(`${base}/timing/`).set(admin).set('Content-Type', 'application/json').send('[1,2]');
    expect(bad.status).toBe(400);
  });

  it('timing: takes Insight fields without time_to_see_data_ms and records what is there', async () => {
    const res = await request(f.app).post(`${base}/timing/`).set(admin).send({ name: 'Daily signups', filters, query_id: 'q-insight-fields' });
    expect([res.status, res.text]).toEqual([200, '']);
    const rows = await (
      await f.ch.query({ query: "SELECT time_to_see_data_ms, report FROM insight_timings WHERE query_id = 'q-insight-fields'", format: 'JSONEachRow' })
    ).json<{ time_to_see_data_ms: number | null; report: string }>();
    expect(rows.map((r) => [r.time_to_see_data_ms, JSON.parse(r.report).name])).toEqual([[null, 'Daily signups']]);
    const negative = await request(f.app).post(`${base}/timing/`).set(admin).send({ time_to_see_data_ms: -1 });
    expect([negative.status, negative.body.attr]).toEqual([400, 'time_to_see_data_ms']);
  });

  it('refuses at write an insight naming an action or cohort the project does not have, which reading would refuse', async () => {
    const action = await request(f.app)
      .post('/api/projects/1/actions/')
      .set(admin)
      .send({ name: 'Signed up (insight check)', steps: [{ event: 'signup' }] });
    const cohort = await request(f.app)
      .post('/api/projects/1/cohorts/')
      .set(admin)
      .send({ name: 'Pro (insight check)', groups: [{ properties: [{ key: 'plan', type: 'person', value: 'pro' }] }] });
    const trend = (extra: Record<string, unknown>) => ({ name: 'checked', filters: { insight: 'TRENDS', date_from: '-7d', ...extra } });
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['a missing action', trend({ actions: [{ id: 999_999 }] }), 'actions', 'action_does_not_exist'],
      [
        'a missing cohort filter',
        trend({ events: [{ id: 'signup' }], properties: [{ key: 'id', type: 'cohort', value: 999_998 }] }),
        'properties',
        'cohort_does_not_exist',
      ],
      [
        'a missing cohort breakdown',
        trend({ events: [{ id: 'signup' }], breakdown_type: 'cohort', breakdown: [999_997] }),
        'properties',
        'cohort_does_not_exist',
      ],
      [
        'a funnel with a missing action',
        { filters: { insight: 'FUNNELS', events: [{ id: 'signup', order: 0 }], actions: [{ id: 999_999, order: 1 }] } },
        'actions',
        'action_does_not_exist',
      ],
    ];
    for (const [name, body, attr, code] of cases) {
      const res = await request(f.app).post(`${base}/`).set(admin).send(body);
      expect([name, res.status, res.body.attr, res.body.code]).toEqual([name, 400, attr, code]);
    }
    const good = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send(trend({ actions: [{ id: action.body.id }], properties: [{ key: 'id', type: 'cohort', value: cohort.body.id }] }));
    expect(good.status).toBe(201);
    expect((await request(f.app).get(`${base}/${good.body.id}/`).set(admin)).status).toBe(200);
    // A PATCH with a new query is checked too; one of other fields is not.
    const patched = await request(f.app)
      .patch(`${base}/${good.body.id}/`)
      .set(admin)
      .send({ filters: { insight: 'TRENDS', actions: [{ id: 999_999 }] } });
    expect([patched.status, patched.body.code]).toEqual([400, 'action_does_not_exist']);
    await request(f.app).patch(`/api/projects/1/actions/${action.body.id}/`).set(admin).send({ deleted: true }).expect(200);
    expect((await request(f.app).patch(`${base}/${good.body.id}/`).set(admin).send({ description: 'still saved' })).status).toBe(200);
    await request(f.app).patch(`${base}/${good.body.id}/`).set(admin).send({ deleted: true });
  });

  it('needs insight:write to write and keeps other projects out', async () => {
    expect((await request(f.app).post(`${base}/`).set(bearer('phx_insight_reader')).send({ name: 'x' })).status).toBe(403);
    expect((await request(f.app).get(`${base}/99999/`).set(admin)).status).toBe(404);
    const bad = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'x', dashboards: [424242] });
    expect(bad.body).toMatchObject({ attr: 'dashboards__0', code: 'does_not_exist' });
  });
});
