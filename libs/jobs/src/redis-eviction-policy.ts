import type { Redis } from 'ioredis';

/** Refused at startup: BullMQ keeps its queues, locks and schedulers in Redis and cannot lose a key. */
export class RedisEvictionPolicyError extends Error {}

/**
 * Checks that Redis never evicts keys (`maxmemory-policy noeviction`), as BullMQ requires: under
 * any other policy a full Redis silently drops job schedulers and job locks. Read from
 * `INFO memory`, which managed Redis services answer even where CONFIG is disabled.
 */
export async function assertRedisNoEviction(connection: Redis): Promise<void> {
  const info = await connection.info('memory');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined) throw new RedisEvictionPolicyError('Redis did not report its maxmemory-policy (INFO memory); BullMQ needs noeviction.');
  if (policy !== 'noeviction') {
    throw new RedisEvictionPolicyError(
      `Redis maxmemory-policy is "${policy}", but the job queues (BullMQ) need "noeviction": with eviction, a full Redis silently drops scheduled jobs and job locks. ` +
        'Set it with `CONFIG SET maxmemory-policy noeviction` (and `maxmemory-policy noeviction` in redis.conf), or use a Redis that does not evict.',
    );
  }
}
