/**
 * After `reset_token`, every api process refuses the old project API key at once: the one that
 * made the reset and another, each with a token cache that had the old key, told through Redis
 * pub/sub as flag changes are (distributed mode). The gateway process is checked end to end in
 * test/distributed.e2e.test.ts, the embedded service in apps/all-in-one.
 */
import request from 'supertest';
import { PROJECT_TOKEN_CHANGES_CHANNEL } from '@sightline/accounts';
import { createRedisInvalidation, type InvalidationChannel } from '@sightline/bus';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { testServices, uniqueName, waitFor, waitForSubscribers } from '@sightline/testkit';
import { createApiApp } from '../app';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

describe('reset_token reaches every process at once', () => {
  // One Redis channel per process, as each process opens its own connection.
  const channelName = `${PROJECT_TOKEN_CHANGES_CHANNEL}:${uniqueName('test')}`;
  const channels: InvalidationChannel[] = [];
  const channel = () => {
    const c = createRedisInvalidation(testServices().redisUrl, { channel: channelName });
    channels.push(c);
    return c;
  };
  let f: FlagFixture;
  let otherApi: ReturnType<typeof createApiApp>;

  beforeAll(async () => {
    f = await createFlagFixture('resettoken', Date.now, 'pg', { projectTokenChanges: channel() });
    otherApi = createApiApp({
      db: f.db,
      ch: f.ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      projectTokenChanges: channel(),
    });
    await waitForSubscribers(testServices().redisUrl, channelName, channels.length);
  });
  afterAll(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await f.close();
  });

  /** What each process answers for a project API key: flags and flag definitions. */
  const answers = async (token: string) => ({
    definitionsHere: (await request(f.app).get(`/flags/definitions?token=${token}`).set(bearer(ADMIN_KEY))).status,
    flagsHere: (await request(f.app).post('/flags/?v=2').send({ token, distinct_id: 'd' })).status,
    flagsThere: (await request(otherApi).post('/flags/?v=2').send({ token, distinct_id: 'd' })).status,
    definitionsThere: (await request(otherApi).get(`/flags/definitions?token=${token}`).set(bearer(ADMIN_KEY))).status,
  });

  it('refuses the old key everywhere within moments, not minutes, and takes the new one', async () => {
    const old = (await request(f.app).get('/api/projects/1/').set(bearer(ADMIN_KEY))).body.api_token as string;
    // Every cache now holds the old key (for five minutes without an announcement).
    expect(await answers(old)).toEqual({ definitionsHere: 200, flagsHere: 200, flagsThere: 200, definitionsThere: 200 });

    const reset = await request(f.app).patch('/api/projects/1/reset_token/').set(bearer(ADMIN_KEY)).send({});
    expect(reset.status).toBe(200);
    const fresh = reset.body.api_token as string;
    expect(fresh).not.toBe(old);

    // Pub/sub delivery takes milliseconds; the bound here is generous for a loaded machine and far below the caches' five minutes.
    const refused = await waitFor(
      async () => {
        const now = await answers(old);
        return Object.values(now).every((status) => status === 401) ? now : false;
      },
      { timeoutMs: 10_000, description: 'every process to refuse the old key' },
    );
    expect(refused).toEqual({ definitionsHere: 401, flagsHere: 401, flagsThere: 401, definitionsThere: 401 });
    expect(await answers(fresh)).toEqual({ definitionsHere: 200, flagsHere: 200, flagsThere: 200, definitionsThere: 200 });
  });
});
