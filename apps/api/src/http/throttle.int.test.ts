import { Redis } from 'ioredis';
import request from 'supertest';
import { createMetrics } from '@sightline/metrics';
import { freePort, testServices, uniqueName } from '@sightline/testkit';
import { silentLogger } from '@sightline/logger';
import { createApiApp, POSTHOG_RATE_LIMITS } from '../app';
import { bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

describe('rate limits on the management API (Redis, distributed mode)', () => {
  let redis: Redis;
  const fixtures: FlagFixture[] = [];
  const prefix = uniqueName('throttle');

  beforeAll(async () => {
    redis = new Redis(testServices().redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await new Promise((resolve) => redis.once('ready', resolve));
  });
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.close()));
    await redis.quit();
  });

  it('answers the 481st request of a minute 429 with Retry-After, across api processes sharing Redis; decide stays open', async () => {
    const access = { rateLimits: POSTHOG_RATE_LIMITS, rateLimitRedis: redis, rateLimitKeyPrefix: prefix };
    const first = await createFlagFixture('throttle1', Date.now, 'pg', { access });
    fixtures.push(first);
    await first.addKey('phx_throttled', ['project:read']);
    // A second api app on the same database and Redis, as a second api process would be.
    const second = {
      app: createApiApp({ db: first.db, ch: first.ch, logger: silentLogger(), metrics: createMetrics(), readiness: [], isShuttingDown: () => false, access }),
    };
    const key = bearer('phx_throttled');
    for (let i = 0; i < 480; i++) {
      const app = i % 2 === 0 ? first.app : second.app;
      const res = await request(app).get('/api/projects/1/').set(key);
      if (res.status !== 200) throw new Error(`request ${i + 1}: ${res.status} ${res.text}`);
    }
    const refused = await request(first.app).get('/api/projects/1/').set(key);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({
      type: 'throttled_error',
      code: 'throttled',
      detail: `Request was throttled. Expected available in ${refused.headers['retry-after']} seconds.`,
      attr: null,
    });
    // Flag evaluation is exempt.
    const decide = await request(first.app).post('/flags/?v=2').send({ api_key: 'phc_unknown', distinct_id: 'u' });
    expect(decide.status).not.toBe(429);
  });

  it('lets requests through and counts them when Redis is down (fails open)', async () => {
    const dead = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    dead.on('error', () => undefined);
    await dead.connect().catch(() => undefined);
    const metrics = createMetrics();
    const f = await createFlagFixture('throttledown', Date.now, 'pg', { access: { rateLimits: POSTHOG_RATE_LIMITS, rateLimitRedis: dead }, metrics });
    fixtures.push(f);
    await f.addKey('phx_redis_down', ['project:read']);
    for (let i = 0; i < 5; i++) expect((await request(f.app).get('/api/projects/1/').set(bearer('phx_redis_down'))).status).toBe(200);
    expect((await metrics.registry.getSingleMetric('api_rate_limit_failed_open_total')!.get()).values[0]!.value).toBe(5);
    dead.disconnect();
  });
});
