import request from 'supertest';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore } from '@sightline/postgres';
import { createTestStores, startOutageProxy } from '@sightline/testkit';
import { createApiApp } from '../app';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

describe('remote config: /array/:token/config and config.js', () => {
  let f: FlagFixture;
  let token: string;
  const admin = bearer(ADMIN_KEY);

  beforeAll(async () => {
    f = await createFlagFixture('remote_config', Date.now);
    [{ api_token: token }] = (await f.db.query<{ api_token: string }>('SELECT api_token FROM projects WHERE id = 1')) as [{ api_token: string }];
  });
  afterAll(() => f.close());

  it('answers the JSON config with CORS, caching headers and an ETag that revalidates to 304', async () => {
    const res = await request(f.app).get(`/array/${token}/config`).set('Origin', 'https://shop.example').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.body).toMatchObject({
      token,
      supportedCompression: ['gzip', 'gzip-js'],
      hasFeatureFlags: false,
      autocapture_opt_out: false,
      analytics: { endpoint: '/i/v0/e/' },
      sessionRecording: false,
      surveys: false,
      siteApps: [],
    });
    await request(f.app).get(`/array/${token}/config`).set('If-None-Match', res.headers['etag']!).expect(304);
  });

  it('answers the script form, which sets window._POSTHOG_REMOTE_CONFIG[token]', async () => {
    const res = await request(f.app).get(`/array/${token}/config.js`).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/javascript/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.text).toContain(`window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(token)}]`);
  });

  it('follows PATCH /api/projects/:id/ and the project having an active flag', async () => {
    await request(f.app).patch('/api/projects/1/').set(admin).send({ autocapture_opt_out: true, heatmaps_opt_in: true }).expect(200);
    await request(f.app)
      .post('/api/projects/1/feature_flags/')
      .set(admin)
      .send({ key: 'on', filters: { groups: [{ rollout_percentage: 100 }] } })
      .expect(201);
    const res = await request(f.app).get(`/array/${token}/config`).expect(200);
    expect(res.body).toMatchObject({ autocapture_opt_out: true, heatmaps: true, hasFeatureFlags: true });
    // /decide carries the same settings in its config part.
    const decide = await request(f.app).post('/decide/?v=3').send({ api_key: token, distinct_id: 'u' }).expect(200);
    expect(decide.body).toMatchObject({ autocapture_opt_out: true, heatmaps: true, sessionRecording: false });
    await request(f.app).patch('/api/projects/1/').set(admin).send({ autocapture_opt_out: false, heatmaps_opt_in: false }).expect(200);
  });

  it.each(['phc_nobody', 'phx_personal_key_shape', '%20'])('answers 404 JSON, readable cross-origin, for the unknown key %s', async (unknown) => {
    for (const path of [`/array/${unknown}/config`, `/array/${unknown}/config.js`]) {
      const res = await request(f.app).get(path).expect(404);
      expect(res.body).toMatchObject({ type: 'invalid_request', code: 'not_found' });
      expect(res.headers['access-control-allow-origin']).toBe('*');
    }
  });

  it('answers a preflight', async () => {
    const res = await request(f.app).options(`/array/${token}/config`).set('Access-Control-Request-Headers', 'x-custom').expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-headers']).toBe('x-custom');
  });
});

describe('project SDK settings', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  beforeAll(async () => {
    f = await createFlagFixture('project_sdk_settings', Date.now);
  });
  afterAll(() => f.close());

  it('reads and changes them, keeping the ones not sent', async () => {
    const before = await request(f.app).get('/api/projects/1/').set(admin).expect(200);
    expect(before.body).toMatchObject({
      autocapture_opt_out: false,
      autocapture_exceptions_opt_in: false,
      autocapture_web_vitals_opt_in: false,
      capture_performance_opt_in: false,
      capture_dead_clicks: false,
      heatmaps_opt_in: false,
      session_recording_opt_in: false,
      surveys_opt_in: false,
    });
    await request(f.app).patch('/api/projects/1/').set(admin).send({ capture_dead_clicks: true }).expect(200);
    const after = await request(f.app)
      .patch('/api/projects/1/')
      .set(admin)
      .send({ autocapture_web_vitals_opt_in: true, session_recording_opt_in: false })
      .expect(200);
    expect(after.body).toMatchObject({ capture_dead_clicks: true, autocapture_web_vitals_opt_in: true, autocapture_opt_out: false });
  });

  it.each([
    [{ autocapture_opt_out: 'yes' }, 'autocapture_opt_out', 'invalid'],
    [{ session_recording_opt_in: true }, 'session_recording_opt_in', 'not_supported'],
    [{ surveys_opt_in: true }, 'surveys_opt_in', 'not_supported'],
  ])('refuses %j with a 400 naming %s', async (body, attr, code) => {
    const res = await request(f.app).patch('/api/projects/1/').set(admin).send(body).expect(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr, code });
  });
});

describe('remote config while PostgreSQL is unreachable', () => {
  it('answers 503 JSON with Retry-After, not a 500', async () => {
    const stores = await createTestStores('remote_config_outage');
    const real = new URL(stores.postgresUrl);
    const proxy = await startOutageProxy({ host: real.hostname, port: Number(real.port) });
    const proxied = new URL(stores.postgresUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const db = await createMetadataStore({ url: proxied.toString() });
    try {
      const app = createApiApp({ db, ch: stores.ch, logger: silentLogger(), metrics: createMetrics(), readiness: [], isShuttingDown: () => false });
      const [project] = await stores.db.query<{ api_token: string }>('SELECT api_token FROM projects WHERE id = 1');
      await request(app).get(`/array/${project!.api_token}/config`).expect(200);
      await proxy.cut();
      const res = await request(app).get(`/array/${project!.api_token}/config.js`);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toMatchObject({ code: expect.any(String), detail: expect.any(String) });
    } finally {
      await db.close().catch(() => undefined);
      await proxy.close();
      await stores.close();
    }
  });
});
