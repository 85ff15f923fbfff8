/**
 * The principal cache (a personal key's user, scopes and restrictions, kept a few seconds so a
 * request does not look its key up in the metadata store) never lets a key do more than it holds
 * now: every change made through the API (scopes, restrictions, roll, deletion) is refused or
 * narrowed on the very next request of the process that made it (the embedded mode's PGlite),
 * and within moments in another api process told through Redis (distributed mode). The caches
 * here keep entries a minute, so only the announcement can make a change visible in time; a
 * change made behind the API's back is seen once the entry's time bound passes.
 */
import request from 'supertest';
import { createPrincipalCache, PRINCIPAL_CHANGES_CHANNEL } from '@sightline/accounts';
import { hashPersonalApiKey } from '@sightline/auth';
import { createInMemoryInvalidation, createRedisInvalidation, type InvalidationChannel } from '@sightline/bus';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { testServices, uniqueName, waitFor, waitForSubscribers } from '@sightline/testkit';
import { createApiApp } from '../app';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const MINUTE = 60_000;

describe('principal cache: a key change takes effect on the next request', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);

  beforeAll(async () => {
    f = await createFlagFixture('principalcache', Date.now, 'pglite', { principalCacheMaxAgeMs: MINUTE });
  });
  afterAll(() => f.close());

  const issue = async (scopes: string[], extra: Record<string, unknown> = {}) => {
    const created = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'cached', scopes, ...extra });
    expect(created.status).toBe(201);
    return { id: created.body.id as number, value: created.body.value as string };
  };
  const status = async (path: string, key: string) => (await request(f.app).get(path).set(bearer(key))).status;

  it('refuses a deleted key on the next request', async () => {
    const key = await issue(['project:read']);
    expect(await status('/api/projects/1/', key.value)).toBe(200);
    expect(await status('/api/projects/1/', key.value)).toBe(200);
    expect((await request(f.app).delete(`/api/personal_api_keys/${key.id}/`).set(admin)).status).toBe(204);
    expect(await status('/api/projects/1/', key.value)).toBe(401);
  });

  it('refuses a key that deleted itself (@current) on its next request', async () => {
    const key = await issue(['project:read', 'personal_api_key:write']);
    expect(await status('/api/projects/1/', key.value)).toBe(200);
    expect((await request(f.app).delete('/api/personal_api_keys/@current/').set(bearer(key.value))).status).toBe(204);
    expect(await status('/api/projects/1/', key.value)).toBe(401);
  });

  it("refuses a rolled key's old value on the next request and takes the new one", async () => {
    const key = await issue(['project:read']);
    expect(await status('/api/projects/1/', key.value)).toBe(200);
    const rolled = await request(f.app).post(`/api/personal_api_keys/${key.id}/roll/`).set(admin).send({});
    expect(rolled.status).toBe(200);
    expect(await status('/api/projects/1/', key.value)).toBe(401);
    expect(await status('/api/projects/1/', rolled.body.value as string)).toBe(200);
  });

  it('applies narrowed scopes on the next request', async () => {
    const key = await issue(['project:read', 'feature_flag:read']);
    expect(await status('/api/projects/1/feature_flags/', key.value)).toBe(200);
    const narrowed = await request(f.app)
      .patch(`/api/personal_api_keys/${key.id}/`)
      .set(admin)
      .send({ scopes: ['project:read'] });
    expect(narrowed.status).toBe(200);
    const denied = await request(f.app).get('/api/projects/1/feature_flags/').set(bearer(key.value));
    expect([denied.status, denied.body.detail]).toEqual([403, "API key missing required scope 'feature_flag:read'"]);
    expect(await status('/api/projects/1/', key.value)).toBe(200);
  });

  it('applies a new project restriction on the next request', async () => {
    const [other] = await f.db.query<{ id: number }>(
      `INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'Second', 'phc_principal_cache_second') RETURNING id`,
      [f.organizationId],
    );
    const key = await issue(['project:read'], { scoped_teams: [1] });
    expect(await status('/api/projects/1/', key.value)).toBe(200);
    const restricted = await request(f.app)
      .patch(`/api/personal_api_keys/${key.id}/`)
      .set(admin)
      .send({ scoped_teams: [other!.id] });
    expect(restricted.status).toBe(200);
    expect(await status('/api/projects/1/', key.value)).toBe(403);
    expect(await status(`/api/projects/${other!.id}/`, key.value)).toBe(200);
  });

  it('sees a change made behind the API (raw SQL) once the time bound passes, not before', async () => {
    let clock = 1_000_000;
    const cache = createPrincipalCache(f.db, { changes: createInMemoryInvalidation<number>(), maxAgeMs: 3_000, now: () => clock });
    const key = await issue(['project:read']);
    const hash = hashPersonalApiKey(key.value);
    expect((await cache.lookup(hash))?.scopes).toEqual(['project:read']);
    await f.db.query('DELETE FROM personal_api_keys WHERE id = $1', [key.id]);
    // Within the bound the entry stands (this is what the announcement exists for)...
    clock += 2_999;
    expect(await cache.lookup(hash)).not.toBeNull();
    // ...and past it the key is looked up again, and is gone.
    clock += 2;
    expect(await cache.lookup(hash)).toBeNull();
  });

  it('writes last_used_at at most hourly, not per lookup, even with nothing cached', async () => {
    const cache = createPrincipalCache(f.db, { changes: createInMemoryInvalidation<number>(), maxAgeMs: 0 });
    const key = await issue(['project:read']);
    const lastUsed = async () =>
      (await f.db.query<{ t: string | null }>('SELECT last_used_at::text AS t FROM personal_api_keys WHERE id = $1', [key.id]))[0]!.t;
    await cache.lookup(hashPersonalApiKey(key.value));
    const first = await waitFor(lastUsed, { timeoutMs: 5_000, intervalMs: 20, description: 'last_used_at written on first use' });
    for (let i = 0; i < 5; i++) await cache.lookup(hashPersonalApiKey(key.value));
    // The store runs statements in order: a write the lookups queued has run before this read.
    expect(await lastUsed()).toBe(first);
  });

  it('caches no unknown key: a key inserted after a miss works at once', async () => {
    const cache = createPrincipalCache(f.db, { changes: createInMemoryInvalidation<number>(), maxAgeMs: MINUTE });
    const value = `phx_not_yet_${uniqueName('k')}`;
    expect(await cache.lookup(hashPersonalApiKey(value))).toBeNull();
    await f.addKey(value, ['project:read']);
    expect((await cache.lookup(hashPersonalApiKey(value)))?.scopes).toEqual(['project:read']);
  });
});

describe('principal cache across api processes (distributed mode)', () => {
  // One Redis channel per process, as each process opens its own connection.
  const channelName = `${PRINCIPAL_CHANGES_CHANNEL}:${uniqueName('test')}`;
  const channels: InvalidationChannel[] = [];
  const channel = () => {
    const c = createRedisInvalidation(testServices().redisUrl, { channel: channelName });
    channels.push(c);
    return c;
  };
  let f: FlagFixture;
  let otherApi: ReturnType<typeof createApiApp>;

  beforeAll(async () => {
    f = await createFlagFixture('principalcachedist', Date.now, 'pg', { principalChanges: channel(), principalCacheMaxAgeMs: MINUTE });
    otherApi = createApiApp({
      db: f.db,
      ch: f.ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      principalChanges: channel(),
      principalCacheMaxAgeMs: MINUTE,
    });
    await waitForSubscribers(testServices().redisUrl, channelName, channels.length);
  });
  afterAll(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await f.close();
  });

  it('refuses a key deleted in one process in the other within moments, not at the time bound', async () => {
    const created = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(bearer(ADMIN_KEY))
      .send({ label: 'two processes', scopes: ['project:read'] });
    expect(created.status).toBe(201);
    const key = bearer(created.body.value as string);
    // Both processes now hold the key (for a minute without an announcement).
    expect((await request(f.app).get('/api/projects/1/').set(key)).status).toBe(200);
    expect((await request(otherApi).get('/api/projects/1/').set(key)).status).toBe(200);

    expect((await request(f.app).delete(`/api/personal_api_keys/${created.body.id}/`).set(bearer(ADMIN_KEY))).status).toBe(204);
    // The process that deleted it refuses it at once.
    expect((await request(f.app).get('/api/projects/1/').set(key)).status).toBe(401);
    // Pub/sub delivery takes milliseconds; the bound is generous for a loaded machine and far below the minute.
    await waitFor(async () => (await request(otherApi).get('/api/projects/1/').set(key)).status === 401, {
      timeoutMs: 10_000,
      intervalMs: 20,
      description: 'the other process refuses the deleted key',
    });
  });
});
