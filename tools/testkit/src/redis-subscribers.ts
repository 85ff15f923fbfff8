import { Redis } from 'ioredis';
import { waitFor } from '@sightline/local-services';

/**
 * Waits until Redis counts `count` subscribers on `channel`. Caches subscribe as they are created,
 * asynchronously: a test that announces before every one is subscribed would lose the message.
 */
export async function waitForSubscribers(redisUrl: string, channel: string, count: number): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    await waitFor(async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]) === count, {
      timeoutMs: 10_000,
      intervalMs: 20,
      description: `${count} subscriber(s) on ${channel}`,
    });
  } finally {
    redis.disconnect();
  }
}
