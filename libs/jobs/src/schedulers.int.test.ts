import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { silentLogger } from '@sightline/logger';
import { freePort, startProcess, testServices, uniqueName, waitFor } from '@sightline/testkit';
import { createBullmqScheduler, readBullmqNextRun } from './bullmq-scheduler';
import { createCronScheduler } from './cron-scheduler';
import type { JobScheduler } from './job-scheduler';

const WEEKLY = '0 5 * * 0';

function expectSunday0500Utc(next: Date | null | undefined) {
  expect(next).toBeInstanceOf(Date);
  expect(next!.getUTCDay()).toBe(0);
  expect(next!.getUTCHours()).toBe(5);
  expect(next!.getUTCMinutes()).toBe(0);
  expect(next!.getTime()).toBeGreaterThan(Date.now());
  expect(next!.getTime() - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
}

describe.each(['bullmq', 'cron'] as const)('%s scheduler', (kind) => {
  let scheduler: JobScheduler;
  let prefix: string;
  beforeEach(() => {
    prefix = uniqueName('jobs');
    scheduler =
      kind === 'bullmq' ? createBullmqScheduler({ redisUrl: testServices().redisUrl, prefix, logger: silentLogger() }) : createCronScheduler(silentLogger());
  });
  afterEach(() => scheduler.close());

  it('schedules the weekly job for the next Sunday 05:00 UTC', async () => {
    await scheduler.register({ name: 'weekly', cron: WEEKLY, run: async () => undefined });
    expectSunday0500Utc((await scheduler.nextRuns())['weekly']);
  });

  it('runs a registered job at its time', async () => {
    let runs = 0;
    await scheduler.register({ name: 'every-second', cron: '* * * * * *', run: async () => void runs++ });
    await waitFor(() => runs >= 2, { timeoutMs: 20_000 });
  });

  if (kind === 'bullmq') {
    it('keeps one scheduler entry when several processes register the same job', async () => {
      const other = createBullmqScheduler({ redisUrl: testServices().redisUrl, prefix, logger: silentLogger() });
      await scheduler.register({ name: 'weekly', cron: WEEKLY, run: async () => undefined });
      await other.register({ name: 'weekly', cron: WEEKLY, run: async () => undefined });
      const queue = new Queue('weekly', { connection: { url: testServices().redisUrl }, prefix });
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers).toHaveLength(1);
      expect(schedulers[0]).toMatchObject({ pattern: WEEKLY, tz: 'UTC' });
      await queue.close();
      await other.close();
    });

    it('three workers booting at once leave one scheduler and one waiting job', async () => {
      const runs: number[] = [];
      const others = [0, 1].map(() => createBullmqScheduler({ redisUrl: testServices().redisUrl, prefix, logger: silentLogger() }));
      const all = [scheduler, ...others];
      await Promise.all(all.map((s, i) => s.register({ name: 'weekly', cron: WEEKLY, run: async () => void runs.push(i) })));
      const queue = new Queue('weekly', { connection: { url: testServices().redisUrl }, prefix });
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers).toHaveLength(1);
      expect(schedulers[0]).toMatchObject({ pattern: WEEKLY, tz: 'UTC' });
      // One delayed job waits for the next slot, whoever registered first.
      expect(await queue.getDelayedCount()).toBe(1);
      expectSunday0500Utc(await readBullmqNextRun({ redisUrl: testServices().redisUrl, prefix }, 'weekly'));
      expect(runs).toEqual([]);
      await queue.close();
      await Promise.all(others.map((o) => o.close()));
    });

    it('three workers on a per-second pattern run each slot exactly once between them', async () => {
      const slots: number[] = [];
      const others = [0, 1].map(() => createBullmqScheduler({ redisUrl: testServices().redisUrl, prefix, logger: silentLogger() }));
      await Promise.all(
        [scheduler, ...others].map((s) => s.register({ name: 'often', cron: '* * * * * *', run: async () => void slots.push(Math.floor(Date.now() / 1000)) })),
      );
      await waitFor(() => slots.length >= 3, { timeoutMs: 20_000 });
      await Promise.all(others.map((o) => o.close()));
      expect(new Set(slots).size).toBe(slots.length);
    });
  }
});

describe('a Redis that may evict keys', () => {
  it('is refused at startup with a clear error', async () => {
    const port = await freePort();
    const redis = await startProcess('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
      readyPattern: /Ready to accept connections/,
    });
    const url = `redis://127.0.0.1:${port}`;
    const admin = new IORedis(url);
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const refused = createBullmqScheduler({ redisUrl: url, logger: silentLogger() });
    await expect(refused.register({ name: 'weekly', cron: WEEKLY, run: async () => undefined })).rejects.toThrow(
      /maxmemory-policy is "allkeys-lru", but the job queues \(BullMQ\) need "noeviction"/,
    );
    // Nothing was written: no queue, no scheduler.
    expect(await admin.keys('*')).toEqual([]);
    await refused.close();
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    const accepted = createBullmqScheduler({ redisUrl: url, logger: silentLogger() });
    await accepted.register({ name: 'weekly', cron: WEEKLY, run: async () => undefined });
    expectSunday0500Utc((await accepted.nextRuns())['weekly']);
    await accepted.close();
    admin.disconnect();
    await redis.stop();
  });
});
