/**
 * The project cache (a project's row, kept a few seconds so a request to a project's routes does
 * not read it from the metadata store) never shows a request an older project than the API has
 * answered for: a change through the API (settings, a reset API key) is seen on the very next
 * request of the process that made it (the embedded mode's PGlite), and within moments in another
 * api process told through Redis (distributed mode). The caches here keep entries a minute, so
 * only the announcement can make a change visible in time; a change made behind the API's back
 * is seen once the entry's time bound passes. A cached project never lets a key reach more than
 * it holds now: access is checked per request against the key's own principal.
 */
import request from 'supertest';
import { createProjectCache, PROJECT_CHANGES_CHANNEL } from '@sightline/accounts';
import { createInMemoryInvalidation, createRedisInvalidation, type InvalidationChannel } from '@sightline/bus';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { testServices, uniqueName, waitFor, waitForSubscribers } from '@sightline/testkit';
import { createApiApp } from '../app';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const MINUTE = 60_000;
const admin = bearer(ADMIN_KEY);

/** The store, counting the statements that read one project by id (through any priority view). */
function countingProjectReads(db: MetadataStore): { db: MetadataStore; reads: () => number } {
  let reads = 0;
  const wrap = <T extends Sql>(target: T): T =>
    new Proxy(target, {
      get(t, p) {
        const v: unknown = Reflect.get(t, p, t);
        if (p === 'query')
          return (text: string, ...rest: unknown[]) => {
            if (/FROM projects WHERE id = \$1/.test(text)) reads++;
            return (v as (...a: unknown[]) => unknown).call(t, text, ...rest);
          };
        if (p === 'withPriority' && typeof v === 'function') return (...a: unknown[]) => wrap((v as (...a: unknown[]) => Sql).apply(t, a));
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
  return { db: wrap(db), reads: () => reads };
}

describe('project cache: a project change takes effect on the next request', () => {
  let f: FlagFixture;
  let counted: ReturnType<typeof countingProjectReads>;
  let app: ReturnType<typeof createApiApp>;

  beforeAll(async () => {
    f = await createFlagFixture('projectcache', Date.now, 'pglite', { projectCacheMaxAgeMs: MINUTE });
    counted = countingProjectReads(f.db);
    app = createApiApp({
      db: counted.db,
      ch: f.ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      projectCacheMaxAgeMs: MINUTE,
    });
  });
  afterAll(() => f.close());

  const get = (path: string, key = admin) => request(app).get(path).set(key);

  it('reads a project from the metadata store once, not per request', async () => {
    const before = counted.reads();
    for (let i = 0; i < 3; i++) expect((await get('/api/projects/1/')).status).toBe(200);
    expect(
      (
        await request(app)
          .post('/api/environments/1/query/')
          .set(admin)
          .send({ query: { kind: 'HogQLQuery', query: 'SELECT 1' } })
      ).status,
    ).toBe(200);
    expect(counted.reads() - before).toBeLessThanOrEqual(1);
  });

  it('answers changed settings on the next request, and queries run with them', async () => {
    expect((await get('/api/projects/1/')).body.timezone).toBe('UTC');
    const changed = await request(app).patch('/api/projects/1/').set(admin).send({ timezone: 'Asia/Tokyo', query_timeout_seconds: 7 });
    expect(changed.status).toBe(200);
    try {
      expect((await get('/api/projects/1/')).body).toMatchObject({ timezone: 'Asia/Tokyo', query_timeout_seconds: 7 });
      const query = await request(app)
        .post('/api/environments/1/query/')
        .set(admin)
        .send({ query: { kind: 'HogQLQuery', query: 'SELECT 1' } });
      expect([query.status, query.body.timezone]).toEqual([200, 'Asia/Tokyo']);
    } finally {
      await request(app).patch('/api/projects/1/').set(admin).send({ timezone: 'UTC', query_timeout_seconds: null });
    }
    expect((await get('/api/projects/1/')).body).toMatchObject({ timezone: 'UTC', query_timeout_seconds: null });
  });

  it('answers a reset project API key on the next request', async () => {
    const old = (await get('/api/projects/1/')).body.api_token as string;
    const reset = await request(app).patch('/api/projects/1/reset_token/').set(admin).send({});
    expect(reset.status).toBe(200);
    expect(reset.body.api_token).not.toBe(old);
    expect((await get('/api/projects/1/')).body.api_token).toBe(reset.body.api_token);
  });

  it('checks access per request: a cached project is refused to a key restricted to another', async () => {
    const [other] = await f.db.query<{ id: number }>(
      `INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'Second', $2) RETURNING id`,
      [f.organizationId, `phc_${uniqueName('projectcache')}`],
    );
    // Project 1 is cached by the admin's request; the restricted key is still refused it.
    expect((await get('/api/projects/1/')).status).toBe(200);
    const created = await request(app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'restricted', scopes: ['project:read', 'query:read'], scoped_teams: [other!.id] });
    expect(created.status).toBe(201);
    const key = bearer(created.body.value as string);
    expect((await get('/api/projects/1/', key)).status).toBe(403);
    expect(
      (
        await request(app)
          .post('/api/environments/1/query/')
          .set(key)
          .send({ query: { kind: 'HogQLQuery', query: 'SELECT 1' } })
      ).status,
    ).toBe(403);
    expect((await get(`/api/projects/${other!.id}/`, key)).status).toBe(200);
  });

  it('sees a change made behind the API (raw SQL) once the time bound passes, not before', async () => {
    let clock = 1_000_000;
    const cache = createProjectCache(f.db, { changes: createInMemoryInvalidation<number>(), maxAgeMs: 3_000, now: () => clock });
    const name = (await cache.findById(1))!.name;
    await f.db.query('UPDATE projects SET name = $2 WHERE id = $1', [1, 'Renamed behind the API']);
    try {
      // Within the bound the entry stands (this is what the announcement exists for)...
      clock += 2_999;
      expect((await cache.findById(1))!.name).toBe(name);
      // ...and past it the project is read again.
      clock += 2;
      expect((await cache.findById(1))!.name).toBe('Renamed behind the API');
    } finally {
      await f.db.query('UPDATE projects SET name = $2 WHERE id = $1', [1, name]);
    }
  });

  it('does not cache a read an announcement overtook', async () => {
    const changes = createInMemoryInvalidation<number>();
    const cache = createProjectCache(f.db, { changes, maxAgeMs: MINUTE });
    const name = (await f.db.query<{ name: string }>('SELECT name FROM projects WHERE id = 1'))[0]!.name;
    const overtaken = cache.findById(1);
    await changes.publish(1);
    await f.db.query('UPDATE projects SET name = $2 WHERE id = $1', [1, 'Changed after the announcement']);
    try {
      await overtaken;
      expect((await cache.findById(1))!.name).toBe('Changed after the announcement');
    } finally {
      await f.db.query('UPDATE projects SET name = $2 WHERE id = $1', [1, name]);
    }
  });

  it('caches no unknown project: one inserted after a miss is found at once', async () => {
    const cache = createProjectCache(f.db, { changes: createInMemoryInvalidation<number>(), maxAgeMs: MINUTE });
    const [{ next }] = (await f.db.query<{ next: number }>('SELECT max(id) + 1000 AS next FROM projects')) as [{ next: number }];
    expect(await cache.findById(next)).toBeNull();
    await f.db.query(`INSERT INTO projects (id, uuid, organization_id, name, api_token) VALUES ($1, gen_random_uuid(), $2, 'Late', $3)`, [
      next,
      f.organizationId,
      `phc_${uniqueName('late')}`,
    ]);
    expect((await cache.findById(next))?.name).toBe('Late');
  });

  it('shares frozen rows: a request cannot change what the next one reads', async () => {
    const cache = createProjectCache(f.db, { changes: createInMemoryInvalidation<number>(), maxAgeMs: MINUTE });
    const project = (await cache.findById(1))!;
    expect(() => {
      (project as { timezone: string }).timezone = 'Asia/Tokyo';
    }).toThrow(TypeError);
    expect((await cache.findById(1))!.timezone).toBe('UTC');
  });
});

describe('project cache across api processes (distributed mode)', () => {
  // One Redis channel per process, as each process opens its own connection.
  const channelName = `${PROJECT_CHANGES_CHANNEL}:${uniqueName('test')}`;
  const channels: InvalidationChannel[] = [];
  const channel = () => {
    const c = createRedisInvalidation(testServices().redisUrl, { channel: channelName });
    channels.push(c);
    return c;
  };
  let f: FlagFixture;
  let otherApi: ReturnType<typeof createApiApp>;

  beforeAll(async () => {
    f = await createFlagFixture('projectcachedist', Date.now, 'pg', { projectChanges: channel(), projectCacheMaxAgeMs: MINUTE });
    otherApi = createApiApp({
      db: f.db,
      ch: f.ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      projectChanges: channel(),
      projectCacheMaxAgeMs: MINUTE,
    });
    await waitForSubscribers(testServices().redisUrl, channelName, channels.length);
  });
  afterAll(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await f.close();
  });

  it('answers a project changed in one process from the other within moments, not at the time bound', async () => {
    const zone = async (app: ReturnType<typeof createApiApp>) => (await request(app).get('/api/projects/1/').set(admin)).body.timezone as string;
    // Both processes now hold the project (for a minute without an announcement).
    expect([await zone(f.app), await zone(otherApi)]).toEqual(['UTC', 'UTC']);
    expect((await request(f.app).patch('/api/projects/1/').set(admin).send({ timezone: 'Europe/Berlin' })).status).toBe(200);
    try {
      expect(await zone(f.app)).toBe('Europe/Berlin');
      // Pub/sub delivery takes milliseconds; the bound is generous for a loaded machine and far below the minute.
      await waitFor(async () => (await zone(otherApi)) === 'Europe/Berlin', {
        timeoutMs: 10_000,
        intervalMs: 20,
        description: 'the other process answers the changed project',
      });
    } finally {
      await request(f.app).patch('/api/projects/1/').set(admin).send({ timezone: 'UTC' });
    }
  });
});
