/**
 * `npm run admin -- keys revoke` in distributed mode: the key is deleted in PostgreSQL and its
 * owner announced on the api's personal key change channel (Redis), so a running api process that
 * cached the key refuses it at once, not when its cache entry expires. The api here keeps entries
 * a minute, so only the announcement can make the revocation visible in time.
 */
import request from 'supertest';
import { findPrincipalByKeyHash, PRINCIPAL_CHANGES_CHANNEL } from '@sightline/accounts';
import { hashPersonalApiKey } from '@sightline/auth';
import { createRedisInvalidation, type InvalidationChannel } from '@sightline/bus';
import { testServices, uniqueName, waitFor, waitForSubscribers } from '@sightline/testkit';
import { bearer, createFlagFixture, type FlagFixture } from '../apps/api/src/testing/api-test-fixture';
import { runAdminCommand } from '../apps/cli/src/admin';

const MINUTE = 60_000;

describe('admin keys revoke tells running api processes (distributed mode)', () => {
  // A channel of its own, so parallel test files' announcements do not reach this api.
  const channelName = `${PRINCIPAL_CHANGES_CHANNEL}:${uniqueName('revoke')}`;
  const channels: InvalidationChannel[] = [];
  const channel = () => {
    const c = createRedisInvalidation(testServices().redisUrl, { channel: channelName });
    channels.push(c);
    return c;
  };
  let f: FlagFixture;

  beforeAll(async () => {
    f = await createFlagFixture('adminrevoke', Date.now, 'pg', { principalChanges: channel(), principalCacheMaxAgeMs: MINUTE });
    await waitForSubscribers(testServices().redisUrl, channelName, 1);
  });
  afterAll(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await f.close();
  });

  it('a key the api cached is refused within moments of the revocation, far below the cache bound', async () => {
    const printed: string[] = [];
    const admin = (argv: string[], announcements = {}) => runAdminCommand(argv, f.db, (text) => printed.push(text), announcements);
    expect(await admin(['keys', 'create', '--label', 'revoked from the cli', '--scopes', 'project:read'])).toBe(0);
    const value = /shown once\): (phx_\S+)/.exec(printed.join('\n'))![1]!;
    const keyId = (await findPrincipalByKeyHash(f.db, hashPersonalApiKey(value)))!.keyId;
    const key = bearer(value);
    // The api now holds the key, for a minute without an announcement.
    expect((await request(f.app).get('/api/projects/1/').set(key)).status).toBe(200);

    printed.length = 0;
    const cli = channel();
    expect(await admin(['keys', 'revoke', String(keyId)], { principalChanges: cli })).toBe(0);
    expect(await findPrincipalByKeyHash(f.db, hashPersonalApiKey(value))).toBeNull();
    // Pub/sub delivery takes milliseconds; the bound is generous for a loaded machine and far below the minute.
    await waitFor(async () => (await request(f.app).get('/api/projects/1/').set(key)).status === 401, {
      timeoutMs: 10_000,
      intervalMs: 20,
      description: 'the api refuses the revoked key',
    });
    expect(printed).toEqual([`key ${keyId} revoked; running servers told to refuse it at once`]);
  });
});
