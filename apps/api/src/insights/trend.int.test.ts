import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { insertPersonalKey } from '@sightline/accounts';
import { hashPersonalApiKey, maskPersonalApiKey } from '@sightline/auth';
import { DEFAULT_ANALYTICS_QUERY_LIMITS, insertEvents, type ClickHouseClient } from '@sightline/clickhouse';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { createTestStores, type TestStores, testEventRow } from '@sightline/testkit';
import { createApiApp } from '../app';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const DAY = 86_400_000;
const ADMIN = 'phx_admin_key_for_tests';

const event = (name: string, atMs: number, teamId = 1, uuid = randomUUID(), distinctId = 'u1') => testEventRow({ event: name, atMs, teamId, uuid, distinctId });

describe('management API', () => {
  let stores: TestStores;
  let db: MetadataStore;
  let ch: ClickHouseClient;
  let app: ReturnType<typeof createApiApp>;

  beforeAll(async () => {
    stores = await createTestStores('api', { personalApiKey: ADMIN });
    ({ db, ch } = stores);
    // A key that may only read persons, and a project of another organisation.
    const user = (await db.query<{ id: number }>('SELECT id FROM users'))[0]!.id;
    await insertPersonalKey(db, {
      userId: user,
      label: 'narrow',
      secureValue: hashPersonalApiKey('phx_narrow_key'),
      maskValue: maskPersonalApiKey('phx_narrow_key'),
      scopes: ['person:read'],
    });
    const otherOrg = randomUUID();
    await db.query("INSERT INTO organizations (id, name) VALUES ($1, 'other')", [otherOrg]);
    await db.query("INSERT INTO projects (uuid, organization_id, name, api_token) VALUES ($1, $2, 'theirs', 'phc_theirs')", [randomUUID(), otherOrg]);

    const duplicate = event('signup', NOW - DAY);
    await insertEvents(ch, [
      event('signup', NOW),
      event('signup', NOW, 1, randomUUID(), 'u2'),
      event('signup', NOW - 3 * DAY),
      duplicate,
      { ...duplicate }, // a redelivered event: same uuid
      event('signup', NOW - 30 * DAY), // outside the default range
      event('pageview', NOW),
      event('signup', NOW, 2), // another project's event
    ]);
    app = createApiApp({ db, ch, logger: silentLogger(), metrics: createMetrics(), now: () => NOW, readiness: [], isShuttingDown: () => false });
  });
  afterAll(() => stores.close());

  const auth = (key = ADMIN) => ({ Authorization: `Bearer ${key}` });

  it('runs ANALYTICS_QUERY_CONCURRENCY queries at once; one that waits too long for its turn is a 429', async () => {
    // The first request's query is held in ClickHouse (here: before it), keeping the one slot.
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let queries = 0;
    const heldCh = new Proxy(ch, {
      get(target, property) {
        if (property === 'query')
          return async (params: Parameters<ClickHouseClient['query']>[0]) => {
            if (queries++ === 0) await firstHeld;
            return target.query(params);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const queryLimits = { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxConcurrentReads: 1, maxReadWaitSeconds: 0.3 };
    const gated = createApiApp({
      db,
      ch: heldCh,
      analytics: { queryLimits, cacheMaxBytes: 1024 * 1024 },
      logger: silentLogger(),
      metrics: createMetrics(),
      now: () => NOW,
      readiness: [],
      isShuttingDown: () => false,
    });
    const trend = () =>
      request(gated)
        .post('/api/environments/1/insights/trend/')
        .set(auth())
        .send({ events: [{ id: 'signup' }], refresh: true });
    const first = trend().then((res) => res);
    while (queries === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const second = await trend();
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('1');
    expect(second.body).toMatchObject({ type: 'throttled_error', code: 'concurrency_limit_exceeded', attr: null });
    expect(second.body.detail).toMatch(/busy with other queries/);
    releaseFirst();
    expect((await first).status).toBe(200);
    // Its slot freed, the next one runs.
    expect((await trend()).status).toBe(200);
  });

  it('lists the caller’s projects', async () => {
    const res = await request(app).get('/api/projects/').set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      count: 1,
      next: null,
      previous: null,
      results: [{ id: 1, name: 'Default project', api_token: expect.stringMatching(/^phc_/) }],
    });
  });

  it('answers the interface example with daily counts, zero-filled, each event counted once', async () => {
    const res = await request(app)
      .post('/api/environments/1/insights/trend/')
      .set(auth())
      .send({ events: [{ id: 'signup', math: 'total' }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ is_cached: false, timezone: 'UTC', last_refresh: new Date(NOW).toISOString() });
    const [series] = res.body.result;
    expect(series.days).toEqual(['2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06', '2024-01-07', '2024-01-08', '2024-01-09', '2024-01-10']);
    expect(series.labels[0]).toBe('3-Jan-2024');
    expect(series.data).toEqual([0, 0, 0, 0, 1, 0, 1, 2]);
    expect(series.count).toBe(4);
    expect(series.label).toBe('signup');
    expect(series.filter).toMatchObject({
      date_from: '2024-01-03T00:00:00Z',
      date_to: '2024-01-10T23:59:59.999999Z',
      events: [{ id: 'signup', math: 'total' }],
    });
  });

  it('serves the same trend on the legacy projects path, by GET, and for dau and explicit dates', async () => {
    const post = await request(app)
      .post('/api/projects/1/insights/trend/')
      .set(auth())
      .send({ events: [{ id: 'signup', math: 'dau' }], date_from: '2024-01-10', date_to: '2024-01-10' });
    expect(post.status).toBe(200);
    expect(post.body.result[0]).toMatchObject({ days: ['2024-01-10'], data: [2] });
    const get = await request(app)
      .get('/api/environments/1/insights/trend/')
      .query({ events: JSON.stringify([{ id: 'pageview' }]) })
      .set(auth());
    expect(get.status).toBe(200);
    expect(get.body.result[0].count).toBe(1);
  });

  it.each([
    ['no credentials', '/api/environments/1/insights/trend/', {}, 401, 'not_authenticated'],
    ['an unknown key', '/api/environments/1/insights/trend/', auth('phx_unknown'), 401, 'authentication_failed'],
    ['a key without insight:read', '/api/environments/1/insights/trend/', auth('phx_narrow_key'), 403, 'permission_denied'],
    ['an unknown project', '/api/environments/999/insights/trend/', auth(), 404, 'not_found'],
    ['another organisation’s project', '/api/environments/2/insights/trend/', auth(), 403, 'permission_denied'],
  ])('refuses %s with a DRF error', async (_case, path, headers, status, code) => {
    const res = await request(app)
      .post(path)
      .set(headers)
      .send({ events: [{ id: 'signup' }] });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ type: expect.any(String), code, detail: expect.any(String), attr: null });
  });

  it('answers no series with an empty result, as PostHog does', async () => {
    for (const body of [{}, { events: [] }]) {
      const res = await request(app).post('/api/environments/1/insights/trend/').set(auth()).send(body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ result: [], timezone: 'UTC', is_cached: false });
    }
    const get = await request(app).get('/api/environments/1/insights/trend/').set(auth());
    expect(get.status).toBe(200);
    expect(get.body.result).toEqual([]);
  });

  it('takes every structured field JSON-encoded on GET', async () => {
    const get = await request(app)
      .get('/api/environments/1/insights/trend/')
      .query({
        events: JSON.stringify([{ id: 'signup', math: 'total' }]),
        breakdowns: JSON.stringify([{ property: 'plan', type: 'event' }]),
        breakdown_limit: '5',
        compare: 'true',
        interval: 'day',
        display: 'ActionsTable',
      })
      .set(auth());
    expect(get.status).toBe(200);
    expect(
      get.body.result.map((s: { compare_label: string; breakdown_value: unknown; aggregated_value: number }) => [
        s.compare_label,
        s.breakdown_value,
        s.aggregated_value,
      ]),
    ).toEqual([
      // The previous period has no events, so no breakdown values and no series.
      ['current', ['$$_posthog_breakdown_null_$$'], 4],
    ]);
  });

  it('answers format=csv with one row per series', async () => {
    const res = await request(app)
      .get('/api/environments/1/insights/trend/')
      .query({ events: JSON.stringify([{ id: 'signup' }]), format: 'csv' })
      .set(auth());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.text).toBe(
      'series,breakdown_value,2024-01-03,2024-01-04,2024-01-05,2024-01-06,2024-01-07,2024-01-08,2024-01-09,2024-01-10\r\nsignup,,0,0,0,0,1,0,1,2\r\n',
    );
  });

  it.each([
    ['malformed JSON', '{"events":', 'parse_error', null],
    ['a bad date', '{"events":[{"id":"a"}],"date_from":"someday"}', 'invalid_date', 'date_from'],
    ['an unknown math', '{"events":[{"id":"a","math":"p42"}]}', 'invalid_choice', 'events__0__math'],
    ['an unknown display', '{"events":[{"id":"a"}],"display":"Sparkles"}', 'invalid_choice', 'display'],
    ['a malformed formula', '{"events":[{"id":"a"}],"formula":"A+"}', 'invalid_formula', 'formula'],
    ['a formula naming a missing series', '{"events":[{"id":"a"}],"formula":"A+C"}', 'invalid_formula', 'formula'],
    ['a bad compare_to', '{"events":[{"id":"a"}],"compare":true,"compare_to":"last week"}', 'invalid_date', 'compare_to'],
  ])('answers %s with 400', async (_case, body, code, attr) => {
    const res = await request(app).post('/api/environments/1/insights/trend/').set(auth()).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
  });
});
