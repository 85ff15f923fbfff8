import type { Queue, Worker } from 'bullmq';
import type { Logger } from '@sightline/logger';
import type { JobScheduler, ScheduledJob } from './job-scheduler';
import { assertRedisNoEviction } from './redis-eviction-policy';

// Required on use: the embedded service schedules in-process and skips loading BullMQ (~0.1 s of its start).
const loadBullmq = () => require('bullmq') as typeof import('bullmq');

/**
 * Distributed mode: one BullMQ queue per job (one retry policy per queue), a job scheduler
 * upserted at boot (idempotent across processes and restarts), and a worker in every
 * worker process; BullMQ hands each run to exactly one of them.
 */
export function createBullmqScheduler(options: { redisUrl: string; prefix?: string; logger: Logger }): JobScheduler {
  const { Queue, Worker } = loadBullmq();
  const IORedis = (require('ioredis') as { default: typeof import('ioredis').default }).default;
  // BullMQ workers block on Redis; they require maxRetriesPerRequest: null.
  const connection = new IORedis(options.redisUrl, { maxRetriesPerRequest: null, lazyConnect: false });
  connection.on('error', (err) => options.logger.warn({ err }, 'redis connection error (jobs)'));
  const prefix = options.prefix ?? 'sightline';
  const queues: Queue[] = [];
  const workers: Worker[] = [];
  // Checked once, before the first queue is touched: registration is part of every BullMQ user's startup.
  let evictionChecked: Promise<void> | null = null;
  return {
    async register(job: ScheduledJob) {
      await (evictionChecked ??= assertRedisNoEviction(connection));
      const queue = new Queue(job.name, { connection, prefix });
      queues.push(queue);
      await queue.upsertJobScheduler(
        job.name,
        { pattern: job.cron, tz: 'UTC' },
        {
          name: job.name,
          opts: { attempts: 5, backoff: { type: 'exponential', delay: 60_000 }, removeOnComplete: 100, removeOnFail: 500 },
        },
      );
      const worker = new Worker(job.name, () => job.run(), { connection, prefix, concurrency: 1 });
      worker.on('failed', (j, err) => options.logger.error({ err, job: job.name, attempts: j?.attemptsMade }, 'scheduled job failed'));
      worker.on('error', (err) => options.logger.warn({ err, job: job.name }, 'job worker error'));
      workers.push(worker);
    },
    async nextRuns() {
      const out: Record<string, Date | null> = {};
      for (const queue of queues) {
        const scheduler = await queue.getJobScheduler(queue.name);
        out[queue.name] = scheduler?.next ? new Date(scheduler.next) : null;
      }
      return out;
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(queues.map((q) => q.close()));
      connection.disconnect();
    },
  };
}

/**
 * The next run of a job scheduler registered by a worker, read from Redis without registering
 * anything (for the operator command); null when no worker has registered it yet.
 */
export async function readBullmqNextRun(options: { redisUrl: string; prefix?: string }, name: string): Promise<Date | null> {
  const { Queue } = loadBullmq();
  const queue = new Queue(name, { connection: { url: options.redisUrl, maxRetriesPerRequest: 1 }, prefix: options.prefix ?? 'sightline' });
  try {
    const scheduler = await queue.getJobScheduler(name);
    return scheduler?.next ? new Date(scheduler.next) : null;
  } finally {
    await queue.close();
  }
}
