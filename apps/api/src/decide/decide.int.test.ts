import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { PostHog } from 'posthog-node';
import { bootstrapInstance } from '@sightline/accounts';
import { createAnalyticsStore } from '@sightline/clickhouse';
import { createInMemoryInvalidation, createRedisInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache, type FlagDefinitionsCache } from '@sightline/flag-store';
import { openGeoIp, type GeoIpLookup } from '@sightline/geoip';
import { listen } from '@sightline/http';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import {
  createDecidePersonCache,
  createPersonChangeNotifier,
  PERSON_CHANGES_CHANNEL,
  personChangeCodec,
  type DecidePersonCache,
  type PersonChange,
} from '@sightline/persons';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import {
  createTestPostgresDatabase,
  insertCohort,
  insertFlag,
  insertGroup,
  insertGroupType,
  insertPerson,
  startOutageProxy,
  testServices,
  uniqueName,
  waitFor,
  type TestPostgresDatabase,
} from '@sightline/testkit';
import { createApiApp } from '../app';

import { MAX_FLAGS_BODY_BYTES } from './decide-request';

const TOKEN = 'phc_flags_eval_test_token';
const ADMIN = 'phx_flags_eval_admin_key';

describe('decide and flags endpoints', () => {
  let pg: TestPostgresDatabase;
  let db: MetadataStore;
  let geoip: GeoIpLookup;
  let teamId: number;
  let personId: number;
  const ids: Record<string, number> = {};
  const ch = createAnalyticsStore({ url: 'http://127.0.0.1:1', user: 'default', password: '', database: 'default' });
  const apps: Array<{ close: () => Promise<void> }> = [];

  function makeApp(store: MetadataStore, flagDefinitions?: FlagDefinitionsCache, decidePersons?: DecidePersonCache) {
    return createApiApp({
      db: store,
      ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      geoip,
      flagDefinitions,
      decidePersons,
      flagsStoreTimeoutMs: 500,
    });
  }
  let app: ReturnType<typeof makeApp>;

  beforeAll(async () => {
    pg = await createTestPostgresDatabase('flags_eval');
    db = await createMetadataStore({ url: pg.url });
    await migratePostgres(db);
    teamId = (await bootstrapInstance(db, { projectApiKey: TOKEN, personalApiKey: ADMIN })).projectId;
    geoip = await openGeoIp();
    await insertGroupType(db, teamId, 'company', 0);
    await insertGroup(db, teamId, 0, 'acme', { industry: 'saas', seats: 40 });
    personId = await insertPerson(db, teamId, ['user-1', 'anon-1'], { plan: 'free', email: 'ann@example.com' });
    const staticCohort = await insertCohort(db, teamId, { isStatic: true, personIds: [personId] });
    const dynamicCohort = await insertCohort(db, teamId, {
      isStatic: false,
      filters: {
        properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', value: 'example.com', operator: 'icontains', type: 'person' }] }] },
      },
    });
    ids.a = await insertFlag(db, teamId, { key: 'a', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"x":1}' } } });
    ids.b = await insertFlag(db, teamId, {
      key: 'b',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100, variant: 'test' }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'test', rollout_percentage: 50 },
          ],
        },
      },
    });
    ids.c = await insertFlag(db, teamId, { key: 'c', filters: { groups: [{ properties: [{ key: 'plan', value: 'enterprise', type: 'person' }] }] } });
    await insertFlag(db, teamId, {
      key: 'pro-only',
      filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }] }] },
    });
    await insertFlag(db, teamId, {
      key: 'company-flag',
      filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'industry', value: 'saas', type: 'group', group_type_index: 0 }] }] },
    });
    await insertFlag(db, teamId, { key: 'uk-only', filters: { groups: [{ properties: [{ key: '$geoip_country_code', value: 'GB', type: 'person' }] }] } });
    await insertFlag(db, teamId, { key: 'static-cohort', filters: { groups: [{ properties: [{ key: 'id', value: staticCohort, type: 'cohort' }] }] } });
    await insertFlag(db, teamId, { key: 'dynamic-cohort', filters: { groups: [{ properties: [{ key: 'id', value: dynamicCohort, type: 'cohort' }] }] } });
    await insertFlag(db, teamId, { key: 'continuity', ensureExperienceContinuity: true, filters: { groups: [{ rollout_percentage: 50 }] } });
    await insertFlag(db, teamId, { key: 'off', active: false, filters: { groups: [{ rollout_percentage: 100 }] } });
    app = makeApp(db);
  });

  afterAll(async () => {
    for (const a of apps) await a.close();
    await db.close();
    await pg.drop();
  });

  const decide = (v: string | null, body: Record<string, unknown>) =>
    request(app)
      .post(v === null ? '/decide/' : `/decide/?v=${v}`)
      .send({ api_key: TOKEN, distinct_id: 'user-1', ...body });

  describe('response shapes', () => {
    it('decide v3 answers exactly the decide v3 fields', async () => {
      const res = await decide('3', {}).expect(200);
      expect(res.body).toMatchObject({
        config: { enable_collect_everything: true },
        toolbarParams: {},
        errorsWhileComputingFlags: false,
        isAuthenticated: false,
        supportedCompression: ['gzip', 'gzip-js'],
        featureFlagPayloads: { a: '{"x":1}' },
      });
      expect(res.body.featureFlags).toEqual({
        a: true,
        b: 'test',
        c: false,
        'pro-only': false,
        'company-flag': false,
        'uk-only': false,
        'static-cohort': true,
        'dynamic-cohort': true,
        continuity: expect.any(Boolean),
        off: false,
      });
      expect(typeof res.body.requestId).toBe('string');
    });

    it('decide v1 lists enabled keys, v2 maps enabled keys', async () => {
      const v1 = await decide(null, {}).expect(200);
      expect(v1.body.featureFlags).toEqual(expect.arrayContaining(['a', 'b', 'static-cohort', 'dynamic-cohort']));
      expect(v1.body.featureFlags).not.toContain('c');
      const v2 = await decide('2', {}).expect(200);
      expect(v2.body.featureFlags).toMatchObject({ a: true, b: 'test' });
      expect(v2.body.featureFlags).not.toHaveProperty('c');
    });

    it('decide v4 and flags v2 give FlagDetail objects; flags v1 the legacy maps', async () => {
      for (const res of [await decide('4', {}).expect(200), await request(app).post('/flags/?v=2').send({ token: TOKEN, distinct_id: 'user-1' }).expect(200)]) {
        expect(res.body.flags.a).toEqual({
          key: 'a',
          enabled: true,
          variant: null,
          reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
          metadata: { id: ids.a, version: 1, description: null, payload: '{"x":1}' },
        });
        expect(res.body.flags.c).toMatchObject({ enabled: false, reason: { code: 'no_condition_match', condition_index: 0 } });
        expect(res.body.flags.off.reason.code).toBe('flag_disabled');
        expect(res.body.errorsWhileComputingFlags).toBe(false);
      }
      const v1 = await request(app).post('/flags/?v=1').send({ token: TOKEN, distinct_id: 'user-1' }).expect(200);
      expect(v1.body).toMatchObject({
        featureFlags: { a: true, b: 'test', c: false },
        featureFlagPayloads: { a: '{"x":1}' },
        errorsWhileComputingFlags: false,
      });
      expect(v1.body).not.toHaveProperty('config');
      const noVersion = await request(app).post('/flags').send({ token: TOKEN, distinct_id: 'user-1' }).expect(200);
      expect(noVersion.body).toHaveProperty('flags.a.enabled', true);
      expect(noVersion.body).toHaveProperty('supportedCompression');
    });

    it('GET, HEAD and OPTIONS', async () => {
      expect((await request(app).get('/flags/?v=2').expect(200)).body).toMatchObject({ flags: {}, errorsWhileComputingFlags: false });
      await request(app).head('/flags/').expect(200);
      const preflight = await request(app)
        .options('/flags/')
        .set('Origin', 'https://shop.example')
        .set('Access-Control-Request-Headers', 'content-type')
        .expect(200);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://shop.example');
      const post = await request(app).post('/flags/?v=2').set('Origin', 'https://shop.example').send({ token: TOKEN, distinct_id: 'x' });
      expect(post.headers['access-control-allow-origin']).toBe('https://shop.example');
    });

    it('answers POSTs before Express with the same headers, metrics and refusals as the Express route', async () => {
      const metrics = createMetrics();
      const api = createApiApp({ db, ch, logger: silentLogger(), metrics, readiness: [], isShuttingDown: () => false, geoip });
      const post = await request(api)
        .post('/flags/?v=2')
        .set('Origin', 'https://shop.example')
        .set('X-Request-Id', 'req-fast-1')
        .send({ token: TOKEN, distinct_id: 'user-1' })
        .expect(200);
      expect(post.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(post.headers['x-request-id']).toBe('req-fast-1');
      expect(post.headers['vary']).toBe('Origin');
      expect(post.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS, HEAD');
      // gzip (Content-Encoding) goes through Express's body reader: the same answer.
      const gzipped = await request(api)
        .post('/flags/?v=2')
        .set('Content-Encoding', 'gzip')
        .set('Content-Type', 'application/json')
        .serialize((b: unknown) => b as string)
        .send(gzipSync(JSON.stringify({ token: TOKEN, distinct_id: 'user-1' })))
        .expect(200);
      const stable = (b: Record<string, unknown>) => ({ ...b, evaluatedAt: null, requestId: null });
      expect(stable(gzipped.body)).toEqual(stable(post.body));
      const tooLarge = await request(api)
        .post('/decide/?v=3')
        .set('Content-Type', 'application/json')
        .send(`{"token":"${TOKEN}","distinct_id":"${'x'.repeat(MAX_FLAGS_BODY_BYTES)}"}`);
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body).toMatchObject({ type: 'invalid_request', code: 'payload_too_large' });
      const badJson = await request(api).post('/decide/').set('Content-Type', 'application/json').send('{"token":');
      expect(badJson.status).toBe(400);
      expect(badJson.body).toMatchObject({ type: 'validation_error', attr: null });
      const requests = (await metrics.httpRequests.get()).values;
      const countOf = (route: string, status: string) =>
        requests.find((v) => v.labels['route'] === route && v.labels['status'] === status && v.labels['method'] === 'POST')?.value;
      expect(countOf('/flags', '200')).toBe(2);
      expect(countOf('/decide', '413')).toBe(1);
    });

    it('flag_keys_to_evaluate restricts the answer', async () => {
      const res = await request(app)
        .post('/flags/?v=2')
        .send({ token: TOKEN, distinct_id: 'user-1', flag_keys_to_evaluate: ['a', 'c'] })
        .expect(200);
      expect(Object.keys(res.body.flags).sort()).toEqual(['a', 'c']);
    });
  });

  describe('request bodies', () => {
    const body = JSON.stringify({ token: TOKEN, distinct_id: 'user-1', person_properties: { plan: 'pro' } });

    it('gzip by Content-Encoding, by magic bytes (text/plain) and by ?compression', async () => {
      for (const req of [
        // serialize(): keep supertest from JSON-encoding the Buffer because of the JSON content type.
        request(app)
          .post('/flags/?v=2')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', 'gzip')
          .serialize((b: unknown) => b as string),
        request(app).post('/flags/?v=2').set('Content-Type', 'text/plain'),
        request(app).post('/flags/?v=2&compression=gzip-js').set('Content-Type', 'text/plain'),
      ]) {
        const res = await req.send(gzipSync(body));
        expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { flags: { 'pro-only': { enabled: true } } } });
      }
    });

    it('base64 form data (posthog-js ?compression=base64)', async () => {
      const res = await request(app)
        .post('/flags/?v=2&compression=base64')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`data=${encodeURIComponent(Buffer.from(body).toString('base64'))}`)
        .expect(200);
      expect(res.body.flags['pro-only'].enabled).toBe(true);
    });

    it('clear 4xx answers in the DRF shape', async () => {
      const unknown = await request(app).post('/flags/?v=2').send({ token: 'phc_nobody', distinct_id: 'x' }).expect(401);
      expect(unknown.body).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
      await request(app).post('/decide/?v=3').send({ distinct_id: 'x' }).expect(401);
      expect((await request(app).post('/flags/?v=2').send({ token: TOKEN }).expect(400)).body).toMatchObject({ type: 'validation_error', attr: 'distinct_id' });
      await request(app).post('/flags/?v=2').set('Content-Type', 'application/json').send('{not json').expect(400);
      await request(app)
        .post('/flags/?v=2')
        .set('Content-Type', 'text/plain')
        .send(Buffer.from([0x1f, 0x8b, 1, 2, 3]))
        .expect(400);
    });
  });

  describe('evaluation inputs', () => {
    it('request person_properties override stored ones', async () => {
      const stored = await decide('3', {}).expect(200);
      expect(stored.body.featureFlags['pro-only']).toBe(false);
      const overridden = await decide('3', { person_properties: { plan: 'pro' } }).expect(200);
      expect(overridden.body.featureFlags['pro-only']).toBe(true);
      // A person that does not exist is evaluated with the request's properties only.
      const stranger = await decide('3', { distinct_id: 'stranger', person_properties: { plan: 'pro' } }).expect(200);
      expect(stranger.body.featureFlags).toMatchObject({ 'pro-only': true, 'static-cohort': false, 'dynamic-cohort': false });
    });

    it('groups use stored group properties, overridable by group_properties', async () => {
      expect((await decide('3', { groups: { company: 'acme' } }).expect(200)).body.featureFlags['company-flag']).toBe(true);
      expect(
        (await decide('3', { groups: { company: 'acme' }, group_properties: { company: { industry: 'retail' } } }).expect(200)).body.featureFlags[
          'company-flag'
        ],
      ).toBe(false);
      expect((await decide('3', { groups: { company: 'globex' } }).expect(200)).body.featureFlags['company-flag']).toBe(false);
      const v4 = await decide('4', {}).expect(200);
      expect(v4.body.flags['company-flag'].reason).toEqual({ code: 'no_group_type', condition_index: null, description: 'No group type' });
    });

    it('geoip properties come from X-Forwarded-For unless geoip_disable', async () => {
      const uk = await decide('3', {}).set('X-Forwarded-For', '81.2.69.142, 10.0.0.1').expect(200);
      expect(uk.body.featureFlags['uk-only']).toBe(true);
      const disabled = await decide('3', { geoip_disable: true }).set('X-Forwarded-For', '81.2.69.142').expect(200);
      expect(disabled.body.featureFlags['uk-only']).toBe(false);
    });

    it('experience continuity: $anon_distinct_id becomes the stored hash key', async () => {
      await decide('3', { distinct_id: 'user-1', $anon_distinct_id: 'anon-1' }).expect(200);
      const rows = await db.query<{ hash_key: string }>('SELECT hash_key FROM feature_flag_hash_key_overrides WHERE person_id = $1 AND feature_flag_key = $2', [
        personId,
        'continuity',
      ]);
      expect(rows).toEqual([{ hash_key: 'anon-1' }]);
      // Later requests (no anon id) bucket by the stored key: the same answer whatever the distinct id says.
      const { flagHash } = await import('@sightline/flags');
      const expected = flagHash('continuity', 'anon-1') <= 0.5;
      expect((await decide('3', {}).expect(200)).body.featureFlags.continuity).toBe(expected);
    });
  });

  describe('local evaluation definitions', () => {
    it('needs a personal key; serves flags, cohorts and group types with an ETag; 304 when unchanged', async () => {
      await request(app).get(`/flags/definitions?token=${TOKEN}&send_cohorts`).expect(401);
      await request(app).get(`/flags/definitions?token=${TOKEN}&send_cohorts`).set('Authorization', 'Bearer phx_wrong').expect(401);
      const res = await request(app).get(`/flags/definitions?token=${TOKEN}&send_cohorts`).set('Authorization', `Bearer ${ADMIN}`).expect(200);
      expect(res.body.group_type_mapping).toEqual({ '0': 'company' });
      expect(res.body.flags.map((f: { key: string }) => f.key)).toEqual(expect.arrayContaining(['a', 'b', 'company-flag', 'off']));
      expect(Object.values(res.body.cohorts)).toHaveLength(1); // the dynamic one; static cohorts need the server
      const etag = res.headers['etag'];
      expect(etag).toMatch(/^"[0-9a-f]{40}"$/);
      await request(app).get(`/flags/definitions?token=${TOKEN}&send_cohorts`).set('Authorization', `Bearer ${ADMIN}`).set('If-None-Match', etag).expect(304);
      const legacy = await request(app).get(`/api/feature_flag/local_evaluation?token=${TOKEN}`).set('Authorization', `Bearer ${ADMIN}`).expect(200);
      expect(legacy.body.cohorts).toEqual({});
    });
  });

  describe('with the real posthog-node SDK', () => {
    it('remote (/flags) and local (/flags/definitions) evaluation give the same answers', async () => {
      const server = await listen(app, { host: '127.0.0.1', port: 0 });
      apps.push(server);
      const host = `http://127.0.0.1:${server.port}`;
      const remote = new PostHog(TOKEN, { host, flushAt: 1000, flushInterval: 60_000 });
      const local = new PostHog(TOKEN, { host, personalApiKey: ADMIN, flushAt: 1000, flushInterval: 60_000, featureFlagsPollingInterval: 60_000 });
      try {
        expect(await local.waitForLocalEvaluationReady(5000)).toBe(true);
        const options = { personProperties: { plan: 'pro', email: 'zed@example.com' } };
        const noEvents = { sendFeatureFlagEvents: false };
        expect(await remote.getFeatureFlag('b', 'user-9', { ...options, ...noEvents })).toBe('test');
        expect(await remote.getFeatureFlagPayload('a', 'user-9', undefined, noEvents)).toEqual({ x: 1 });
        const remoteAll = await remote.getAllFlags('user-9', options);
        expect(remoteAll).toMatchObject({ a: true, b: 'test', c: false, 'pro-only': true, 'dynamic-cohort': true });
        for (const key of ['a', 'b', 'c', 'pro-only', 'dynamic-cohort', 'off']) {
          expect(await local.getFeatureFlag(key, 'user-9', { ...options, ...noEvents, onlyEvaluateLocally: true })).toBe(remoteAll[key]);
        }
      } finally {
        await remote.shutdown();
        await local.shutdown();
      }
    });
  });

  describe('partial failure', () => {
    it('answers errorsWhileComputingFlags with the flags the request alone decides when Postgres is unreachable', async () => {
      // A TCP relay in front of PostgreSQL that the test cuts, making the store really unreachable.
      const target = new URL(pg.url);
      const proxy = await startOutageProxy({ host: target.hostname, port: Number(target.port) });
      const proxied = new URL(pg.url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      const viaProxy = await createMetadataStore({ url: proxied.toString() });
      const fragile = makeApp(viaProxy);
      try {
        const warm = await request(fragile)
          .post('/flags/?v=2')
          .send({ token: TOKEN, distinct_id: 'user-1', groups: { company: 'acme' } })
          .expect(200);
        expect(warm.body.errorsWhileComputingFlags).toBe(false);
        await proxy.cut();
        const res = await request(fragile)
          .post('/flags/?v=2')
          .send({ token: TOKEN, distinct_id: 'user-1', person_properties: { plan: 'pro' }, groups: { company: 'acme' } })
          .expect(200);
        expect(res.body.errorsWhileComputingFlags).toBe(true);
        expect(res.body.flags.a.enabled).toBe(true); // no properties needed
        expect(res.body.flags['pro-only'].enabled).toBe(true); // decided by the request's properties
        expect(res.body.flags).not.toHaveProperty('static-cohort'); // needs stored membership
        expect(res.body.flags).not.toHaveProperty('company-flag'); // needs stored group properties
        expect(res.body.flags).not.toHaveProperty('continuity'); // needs stored hash keys
      } finally {
        await viaProxy.close().catch(() => undefined);
      }
    });
  });

  describe('definition cache invalidation', () => {
    it('a change announced on one api instance reaches decide on another within a second (Redis)', async () => {
      const channelName = uniqueName('flags-changed');
      const caches = [0, 1].map(() =>
        createFlagDefinitionsCache({ db, channel: createRedisInvalidation(testServices().redisUrl, { channel: channelName }), maxAgeMs: 3_600_000 }),
      );
      await Promise.all(caches.map((c) => c.ready));
      apps.push({ close: async () => void (await Promise.all(caches.map((c) => c.close()))) });
      const [writer, reader] = caches.map((c) => makeApp(db, c)) as [ReturnType<typeof makeApp>, ReturnType<typeof makeApp>];
      const value = async (target: typeof reader) =>
        (await request(target).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: 'user-1' }).expect(200)).body.featureFlags.c;
      expect(await value(reader)).toBe(false); // cached now
      expect(await value(writer)).toBe(false);
      await db.query(`UPDATE feature_flags SET filters = $1, version = version + 1 WHERE id = $2`, [
        JSON.stringify({ groups: [{ rollout_percentage: 100 }] }),
        ids.c,
      ]);
      const changedAt = Date.now();
      await caches[0]!.notifier.flagsChanged(teamId);
      await waitFor(async () => (await value(reader)) === true, { timeoutMs: 1000, intervalMs: 20 });
      expect(Date.now() - changedAt).toBeLessThan(1000);
      await db.query(`UPDATE feature_flags SET filters = $1 WHERE id = $2`, [
        JSON.stringify({ groups: [{ properties: [{ key: 'plan', value: 'enterprise', type: 'person' }] }] }),
        ids.c,
      ]);
      await caches[0]!.notifier.flagsChanged(teamId);
    });

    it('embedded mode: the in-memory channel invalidates at once', async () => {
      const cache = createFlagDefinitionsCache({ db, channel: createInMemoryInvalidation(), maxAgeMs: 3_600_000 });
      const embedded = makeApp(db, cache);
      const value = async () => (await request(embedded).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: 'user-1' }).expect(200)).body.featureFlags.c;
      expect(await value()).toBe(false);
      await db.query(`UPDATE feature_flags SET active = false WHERE id = $1`, [ids.a]);
      await cache.notifier.flagsChanged(teamId);
      expect((await request(embedded).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: 'user-1' }).expect(200)).body.featureFlags.a).toBe(false);
      await db.query(`UPDATE feature_flags SET active = true WHERE id = $1`, [ids.a]);
      await cache.notifier.flagsChanged(teamId);
    });
  });

  describe('stored person cache', () => {
    /** An api process's person cache (an hour long) and a worker's side of a fresh Redis channel. */
    async function redisPersonCache() {
      const channel = `${PERSON_CHANGES_CHANNEL}:${uniqueName('test')}`;
      const persons = createDecidePersonCache({
        channel: createRedisInvalidation(testServices().redisUrl, { channel, codec: personChangeCodec }),
        maxAgeMs: 3_600_000,
      });
      const workerSide = createRedisInvalidation(testServices().redisUrl, { channel, codec: personChangeCodec });
      await persons.ready;
      apps.push({ close: async () => void (await Promise.all([persons.close(), workerSide.close()])) });
      return { persons, workerSide };
    }

    it("the worker's announcement of a person write reaches decide on another process within a second (Redis)", async () => {
      // An hour: only the announcement can make the new properties visible.
      const { persons, workerSide } = await redisPersonCache();
      const distinctId = uniqueName('cached-person');
      const person = await insertPerson(db, teamId, [distinctId], { plan: 'free' });
      const api = makeApp(db, undefined, persons);
      const proOnly = async () =>
        (await request(api).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: distinctId }).expect(200)).body.featureFlags['pro-only'];
      expect(await proOnly()).toBe(false);
      await db.query(`UPDATE persons SET properties = $1 WHERE id = $2`, [JSON.stringify({ plan: 'pro' }), person]);
      expect(await proOnly()).toBe(false); // the cached answer: the write was not announced yet
      const announcedAt = Date.now();
      await createPersonChangeNotifier(workerSide).personsChanged([{ teamId }]);
      await waitFor(async () => (await proOnly()) === true, { timeoutMs: 1000, intervalMs: 20 });
      expect(Date.now() - announcedAt).toBeLessThan(1000);
    });

    it('embedded mode: an in-process announcement drops the cached person at once; without one it lives maxAgeMs', async () => {
      let clock = 1_000_000;
      const channel = createInMemoryInvalidation<PersonChange>();
      const persons = createDecidePersonCache({ channel, maxAgeMs: 1000, now: () => clock });
      const distinctId = uniqueName('cached-person');
      const person = await insertPerson(db, teamId, [distinctId], { plan: 'free' });
      const api = makeApp(db, undefined, persons);
      const proOnly = async () =>
        (await request(api).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: distinctId }).expect(200)).body.featureFlags['pro-only'];
      expect(await proOnly()).toBe(false);
      await db.query(`UPDATE persons SET properties = $1 WHERE id = $2`, [JSON.stringify({ plan: 'pro' }), person]);
      await createPersonChangeNotifier(channel).personsChanged([{ teamId }]);
      expect(await proOnly()).toBe(true);
      await db.query(`UPDATE persons SET properties = $1 WHERE id = $2`, [JSON.stringify({ plan: 'free' }), person]);
      clock += 1000;
      expect(await proOnly()).toBe(true); // unannounced (an edit by hand), still within maxAgeMs
      clock += 1;
      expect(await proOnly()).toBe(false);
    });

    it("answers a cached person's repeated request from its kept evaluation only while the request is the same", async () => {
      const persons = createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 3_600_000 });
      const distinctId = uniqueName('reused');
      await insertPerson(db, teamId, [distinctId], { plan: 'free' });
      const api = makeApp(db, undefined, persons);
      const proOnly = async (body: Record<string, unknown> = {}) =>
        (
          await request(api)
            .post('/decide/?v=3')
            .send({ api_key: TOKEN, distinct_id: distinctId, ...body })
            .expect(200)
        ).body.featureFlags['pro-only'];
      expect(await proOnly()).toBe(false);
      expect(await proOnly()).toBe(false);
      expect(await proOnly({ person_properties: { plan: 'pro' } })).toBe(true);
      expect(await proOnly()).toBe(false);
      expect(await proOnly({ $properties: { plan: 'pro' } })).toBe(true);
    });

    it("a worker's targeted announcement drops only what it names: the person's answers under every distinct id, a distinct id that appeared, a group", async () => {
      const channel = createInMemoryInvalidation<PersonChange>();
      const persons = createDecidePersonCache({ channel, maxAgeMs: 3_600_000 });
      const notifier = createPersonChangeNotifier(channel);
      const [a1, a2, b, stranger] = ['a1', 'a2', 'b', 'stranger'].map((n) => uniqueName(`targeted-${n}`)) as [string, string, string, string];
      await insertPerson(db, teamId, [a1, a2], { plan: 'free' });
      await insertPerson(db, teamId, [b], { plan: 'free' });
      const company = [{ index: 0, key: uniqueName('company') }];
      const a = await persons.read(db, teamId, a1, []);
      expect(a.personUuid).toMatch(/^[0-9a-f-]{36}$/);
      for (const [id, groups] of [
        [a2, []],
        [b, []],
        [b, company],
        [stranger, []],
      ] as const)
        await persons.read(db, teamId, id, [...groups]);
      const isCached = (id: string, groups: Array<{ index: number; key: string }> = []) => persons.cached(teamId, id, groups) !== undefined;

      await notifier.personsChanged([{ teamId, persons: [a.personUuid!], distinctIds: [], groups: [] }]);
      expect([isCached(a1), isCached(a2), isCached(b), isCached(b, company), isCached(stranger)]).toEqual([false, false, true, true, true]);
      // The stranger got a person: its "no person" answer goes.
      await notifier.personsChanged([{ teamId, persons: [uniqueName('new-person')], distinctIds: [stranger], groups: [] }]);
      expect([isCached(b), isCached(b, company), isCached(stranger)]).toEqual([true, true, false]);
      await notifier.personsChanged([{ teamId, persons: [], distinctIds: [], groups: [[0, company[0]!.key]] }]);
      expect([isCached(b), isCached(b, company)]).toEqual([true, false]);
      // Another project's change drops nothing here; a whole-project one drops everything.
      await notifier.personsChanged([{ teamId: teamId + 1000, persons: [], distinctIds: [b], groups: [] }]);
      expect(isCached(b)).toBe(true);
      // A read that any change of its project overtook is not kept (it may predate that write).
      const overtaken = persons.read(db, teamId, a1, []);
      await notifier.personsChanged([{ teamId, persons: [], distinctIds: [uniqueName('elsewhere')], groups: [] }]);
      await overtaken;
      expect([isCached(a1), isCached(b)]).toEqual([false, true]);
      await notifier.personsChanged([{ teamId }]);
      expect(isCached(b)).toBe(false);
    });

    it('a targeted announcement travels through Redis to another process', async () => {
      const { persons, workerSide } = await redisPersonCache();
      const [written, other] = [uniqueName('redis-written'), uniqueName('redis-other')];
      await insertPerson(db, teamId, [written], {});
      await insertPerson(db, teamId, [other], {});
      const { personUuid } = await persons.read(db, teamId, written, []);
      await persons.read(db, teamId, other, []);
      await createPersonChangeNotifier(workerSide).personsChanged([{ teamId, persons: [personUuid!], distinctIds: [written], groups: [] }]);
      await waitFor(async () => persons.cached(teamId, written, []) === undefined, { timeoutMs: 1000, intervalMs: 10 });
      expect(persons.cached(teamId, other, [])).toBeDefined();
    });

    it('answers at once only a completed, fresh read no announcement overtook', async () => {
      let clock = 1_000_000;
      const channel = createInMemoryInvalidation<PersonChange>();
      const persons = createDecidePersonCache({ channel, maxAgeMs: 1000, now: () => clock });
      const distinctId = uniqueName('cached-at-once');
      await insertPerson(db, teamId, [distinctId], { plan: 'pro' });
      const groups = [{ index: 0, key: 'none' }];
      expect(persons.cached(teamId, distinctId, groups)).toBeUndefined();
      const reading = persons.read(db, teamId, distinctId, groups);
      expect(persons.cached(teamId, distinctId, groups)).toBeUndefined(); // still reading
      const read = await reading;
      expect(read.properties).toEqual({ plan: 'pro' });
      expect(persons.cached(teamId, distinctId, groups)).toBe(read);
      expect(persons.cached(teamId, distinctId, [])).toBeUndefined(); // other groups, other answer
      clock += 1001;
      expect(persons.cached(teamId, distinctId, groups)).toBeUndefined();
      await persons.read(db, teamId, distinctId, groups);
      expect(persons.cached(teamId, distinctId, groups)).toBeDefined();
      await createPersonChangeNotifier(channel).personsChanged([{ teamId }]);
      expect(persons.cached(teamId, distinctId, groups)).toBeUndefined();
      // A read an announcement overtook is not answered at once either.
      const overtaken = persons.read(db, teamId, distinctId, groups);
      await createPersonChangeNotifier(channel).personsChanged([{ teamId }]);
      await overtaken;
      expect(persons.cached(teamId, distinctId, groups)).toBeUndefined();
      expect(createDecidePersonCache({ channel, maxAgeMs: 0 }).cached(teamId, distinctId, groups)).toBeUndefined();
    });

    it('a hit late in its life is answered from the cache and read again beside it, so a person asked often never waits for the store', async () => {
      let clock = 1_000_000;
      const persons = createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 1000, now: () => clock });
      const distinctId = uniqueName('refreshed');
      const person = await insertPerson(db, teamId, [distinctId], { plan: 'free' });
      const plan = () => persons.cached(teamId, distinctId, [])?.properties['plan'];
      await persons.read(db, teamId, distinctId, []);
      await db.query(`UPDATE persons SET properties = $1 WHERE id = $2`, [JSON.stringify({ plan: 'pro' }), person]);
      clock += 400; // before half its life: no second read
      expect(plan()).toBe('free');
      // A miss goes in one statement with every read queued before it, a refresh included: had
      // the hit above queued one, the new plan would be in the cache once this miss is answered.
      await persons.read(db, teamId, uniqueName('flushes-refreshes'), []);
      expect(plan()).toBe('free');
      clock += 400; // past four fifths: answered from the cache, read again beside it
      expect(plan()).toBe('free');
      await waitFor(async () => plan() === 'pro', { timeoutMs: 2000, intervalMs: 10 });
      clock += 900; // 1,700 ms after the first read, 900 after the second: still an answer at once
      expect(plan()).toBe('pro');
      clock += 101;
      expect(plan()).toBeUndefined(); // never past maxAgeMs without a hit to refresh it
    });

    it('a request that writes experience-continuity hash keys reads the person past the cache', async () => {
      const persons = createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 3_600_000 });
      const distinctId = uniqueName('continuity-person');
      await insertPerson(db, teamId, [distinctId], {});
      const api = makeApp(db, undefined, persons);
      const ask = (body: Record<string, unknown>) =>
        request(api)
          .post('/decide/?v=3')
          .send({ api_key: TOKEN, distinct_id: distinctId, ...body })
          .expect(200);
      const before = (await ask({})).body.featureFlags;
      const after = (await ask({ $anon_distinct_id: 'anon-1' })).body.featureFlags;
      // Without the cache: the same request's answer, read straight from the store.
      const uncached = (await request(makeApp(db)).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: distinctId }).expect(200)).body.featureFlags;
      expect(after).toEqual(uncached);
      expect((await ask({})).body.featureFlags).toEqual(uncached);
      expect(Object.keys(before).sort()).toEqual(Object.keys(after).sort());
    });
    it('new hash keys are announced, so a person another process cached is read again; existing keys are not re-announced', async () => {
      const channel = createInMemoryInvalidation<PersonChange>();
      const announced: Array<number | null> = [];
      await channel.subscribe((change) => announced.push(change?.teamId ?? null));
      // Two api processes sharing one announcement channel, each with its own cache.
      const [first, second] = [0, 1].map(() => makeApp(db, undefined, createDecidePersonCache({ channel, maxAgeMs: 3_600_000 })));
      const distinctId = uniqueName('continuity-shared');
      await insertPerson(db, teamId, [distinctId], {});
      const ask = (api: ReturnType<typeof makeApp>, body: Record<string, unknown> = {}) =>
        request(api)
          .post('/decide/?v=3')
          .send({ api_key: TOKEN, distinct_id: distinctId, ...body })
          .expect(200);
      await ask(second); // cached by the second process, without hash keys
      await ask(first, { $anon_distinct_id: 'anon-1' });
      expect(announced).toEqual([teamId]);
      const uncached = (await request(makeApp(db)).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: distinctId }).expect(200)).body.featureFlags;
      expect((await ask(second)).body.featureFlags).toEqual(uncached);
      await ask(first, { $anon_distinct_id: 'anon-1' });
      expect(announced).toEqual([teamId]);
    });
  });

  describe('management writes reach decide', () => {
    it('a flag created, edited and soft-deleted through the management API is seen by the next decide', async () => {
      const cache = createFlagDefinitionsCache({ db, channel: createInMemoryInvalidation(), maxAgeMs: 3_600_000 });
      apps.push({ close: () => cache.close() });
      const api = makeApp(db, cache);
      const key = uniqueName('managed').replace(/[^a-zA-Z0-9_-]/g, '-');
      const flagValue = async () =>
        (await request(api).post('/decide/?v=3').send({ api_key: TOKEN, distinct_id: 'user-1' }).expect(200)).body.featureFlags[key];
      expect(await flagValue()).toBeUndefined(); // definitions now cached without the flag
      const auth = { Authorization: `Bearer ${ADMIN}` };
      const created = await request(api)
        .post(`/api/projects/${teamId}/feature_flags/`)
        .set(auth)
        .send({ key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
        .expect(201);
      expect(await flagValue()).toBe(true);
      await request(api).patch(`/api/projects/${teamId}/feature_flags/${created.body.id}/`).set(auth).send({ active: false }).expect(200);
      expect(await flagValue()).toBe(false);
      await request(api).patch(`/api/projects/${teamId}/feature_flags/${created.body.id}/`).set(auth).send({ deleted: true }).expect(200);
      expect(await flagValue()).toBeUndefined();
    });
  });

  describe('embedded mode (PGlite)', () => {
    it('decides from stored persons and groups with the in-process Postgres', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'flags-pglite-'));
      const embedded = await createMetadataStore({ dataDir });
      try {
        await migratePostgres(embedded);
        const team = (await bootstrapInstance(embedded, { projectApiKey: TOKEN })).projectId;
        await insertGroupType(embedded, team, 'company', 0);
        await insertGroup(embedded, team, 0, 'acme', { industry: 'saas' });
        await insertPerson(embedded, team, ['user-1'], { plan: 'pro' });
        await insertFlag(embedded, team, { key: 'pro-only', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] } });
        await insertFlag(embedded, team, {
          key: 'company-flag',
          filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'industry', value: 'saas', type: 'group', group_type_index: 0 }] }] },
        });
        const res = await request(makeApp(embedded))
          .post('/decide/?v=3')
          .send({ api_key: TOKEN, distinct_id: 'user-1', groups: { company: 'acme' } })
          .expect(200);
        expect(res.body).toMatchObject({ featureFlags: { 'pro-only': true, 'company-flag': true }, errorsWhileComputingFlags: false });
      } finally {
        await embedded.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});
