import type { Logger } from '@sightline/logger';
import { createBullmqScheduler } from './bullmq-scheduler';
import { createCronScheduler } from './cron-scheduler';
import type { JobScheduler } from './job-scheduler';

/** The jobs adapter factory: BullMQ when Redis is configured, otherwise an in-process cron. */
export function createJobScheduler(config: { redisUrl?: string; prefix?: string }, logger: Logger): JobScheduler {
  return config.redisUrl ? createBullmqScheduler({ redisUrl: config.redisUrl, prefix: config.prefix, logger }) : createCronScheduler(logger);
}
