import { Queue } from 'bullmq';
import { silentLogger } from '@sightline/logger';
import { testServices, uniqueName, waitFor } from '@sightline/testkit';
import { createBullmqScheduler } from './bullmq-scheduler';
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
  }
});
