import { Cron } from 'croner';
import type { Logger } from '@sightline/logger';
import type { JobScheduler, ScheduledJob } from './job-scheduler';

/** When a five-field UTC cron pattern fires next, strictly after `after`: what both schedulers compute. */
export function nextCronRun(pattern: string, after: Date = new Date()): Date | null {
  return new Cron(pattern, { timezone: 'UTC', paused: true }).nextRun(after);
}

/** Embedded mode: an in-process cron. `protect` skips a tick while the previous run is still going. */
export function createCronScheduler(logger: Logger): JobScheduler {
  const crons = new Map<string, Cron>();
  return {
    async register(job: ScheduledJob) {
      crons.get(job.name)?.stop();
      crons.set(
        job.name,
        new Cron(job.cron, { timezone: 'UTC', protect: true, name: job.name }, async () => {
          try {
            await job.run();
          } catch (err) {
            logger.error({ err, job: job.name }, 'scheduled job failed; it runs again at its next time');
          }
        }),
      );
    },
    async nextRuns() {
      return Object.fromEntries([...crons].map(([name, cron]) => [name, cron.nextRun()]));
    },
    async close() {
      for (const cron of crons.values()) cron.stop();
      crons.clear();
    },
  };
}
