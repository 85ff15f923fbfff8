export * from './job-scheduler';
export * from './cron-scheduler';
export * from './bullmq-scheduler';
export * from './create-job-scheduler';
export * from './redis-eviction-policy';
export * from './job-operator';
