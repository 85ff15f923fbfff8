/** A recurring job: the same function runs under BullMQ (distributed) or croner (embedded). */
export interface ScheduledJob {
  name: string;
  /** Five-field cron pattern, evaluated in UTC. */
  cron: string;
  run: () => Promise<void>;
}

export interface JobScheduler {
  register(job: ScheduledJob): Promise<void>;
  /** When each registered job runs next (for tests and /_health details). */
  nextRuns(): Promise<Record<string, Date | null>>;
  close(): Promise<void>;
}
