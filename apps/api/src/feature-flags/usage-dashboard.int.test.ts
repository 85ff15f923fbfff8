/**
 * A flag's usage dashboard made through the API, as PostHog makes it (posthog/api/feature_flag.py
 * `_should_create_usage_dashboard`, default true; posthog/helpers/dashboard_templates.py
 * create_feature_flag_dashboard and update_feature_flag_dashboard): a dashboard named after the
 * flag whose insights are not saved insights, so creating flags puts nothing in the insights list
 * or "recently viewed"; none when asked not to; the dashboard following a renamed key.
 */
import request from 'supertest';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const FLAGS = '/api/projects/1/feature_flags';
const INSIGHTS = '/api/environments/1/insights';
const boolean = { groups: [{ properties: [], rollout_percentage: 100 }] };

describe('a flag’s usage dashboard', () => {
  let f: FlagFixture;
  const auth = bearer(ADMIN_KEY);
  beforeAll(async () => {
    f = await createFlagFixture('usage_dashboard', Date.now);
  });
  afterAll(() => f.close());

  const tileInsights = (dashboardId: number) =>
    f.db.query<{ name: string; saved: boolean; description: string; filters: { properties: { value: string }[] } }>(
      'SELECT i.name, i.saved, i.description, i.filters FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id WHERE t.dashboard_id = $1 ORDER BY t.id',
      [dashboardId],
    );

  it('makes one named after the flag by default, whose insights stay out of the saved list and recently viewed', async () => {
    const created = await request(f.app).post(`${FLAGS}/`).set(auth).send({ key: 'checkout', filters: boolean }).expect(201);
    const dashboardId = created.body.usage_dashboard as number;
    expect(dashboardId).toEqual(expect.any(Number));
    const dashboard = await request(f.app).get(`/api/environments/1/dashboards/${dashboardId}/`).set(auth).expect(200);
    expect(dashboard.body.name).toBe('Generated Dashboard: checkout Usage');
    const insights = await tileInsights(dashboardId);
    expect(insights.map((i) => [i.name, i.saved])).toEqual([
      ['Feature Flag Called Total Volume', false],
      ['Feature Flag calls made by unique users per variant', false],
    ]);
    // The insights list the web app shows (saved insights) and "recently viewed" stay empty.
    expect((await request(f.app).get(`${INSIGHTS}/?saved=true`).set(auth).expect(200)).body).toMatchObject({ count: 0, results: [] });
    expect((await request(f.app).get(`${INSIGHTS}/my_last_viewed/`).set(auth).expect(200)).body).toEqual([]);
  });

  it('makes none when asked not to', async () => {
    const dashboardsBefore = (await request(f.app).get('/api/environments/1/dashboards/').set(auth).expect(200)).body.count;
    const created = await request(f.app)
      .post(`${FLAGS}/`)
      .set(auth)
      .send({ key: 'quiet', filters: boolean, _should_create_usage_dashboard: false })
      .expect(201);
    expect(created.body.usage_dashboard).toBeNull();
    expect((await request(f.app).get('/api/environments/1/dashboards/').set(auth).expect(200)).body.count).toBe(dashboardsBefore);
  });

  it('follows a renamed key: the dashboard’s name and its insights’ filters', async () => {
    const created = await request(f.app).post(`${FLAGS}/`).set(auth).send({ key: 'old-name', filters: boolean }).expect(201);
    await request(f.app).patch(`${FLAGS}/${created.body.id}/`).set(auth).send({ key: 'new-name' }).expect(200);
    const dashboard = await request(f.app).get(`/api/environments/1/dashboards/${created.body.usage_dashboard}/`).set(auth).expect(200);
    expect(dashboard.body.name).toBe('Generated Dashboard: new-name Usage');
    const insights = await tileInsights(created.body.usage_dashboard);
    expect(insights.map((i) => i.filters.properties[0]!.value)).toEqual(['new-name', 'new-name']);
    expect(insights[0]!.description).toBe('Shows the number of total calls made on feature flag with key: new-name');
    // A name a person gave the dashboard is theirs.
    await request(f.app).patch(`/api/environments/1/dashboards/${created.body.usage_dashboard}/`).set(auth).send({ name: 'Checkout usage' }).expect(200);
    await request(f.app).patch(`${FLAGS}/${created.body.id}/`).set(auth).send({ key: 'third-name' }).expect(200);
    expect((await request(f.app).get(`/api/environments/1/dashboards/${created.body.usage_dashboard}/`).set(auth).expect(200)).body.name).toBe(
      'Checkout usage',
    );
  });
});
