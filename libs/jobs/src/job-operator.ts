/** A job name no runner knows (the operator command's and the operator route's answer). */
export class UnknownJobError extends Error {
  constructor(
    readonly job: string,
    readonly known: readonly string[],
  ) {
    super(`Unknown job "${job}" (known: ${known.join(', ')}).`);
  }
}

/** A scheduled job as the operator sees it. */
export interface JobStatus {
  name: string;
  cron: string;
  /** ISO time of the next scheduled run, or null when no scheduler has registered it. */
  next_run: string | null;
}

/** A task a job still has to do (for the person-event deletion: one deleted person). */
export interface PendingTask {
  id: number;
  team_id: number;
  person_uuid: string;
  distinct_ids: string[];
  created_at: string;
  started_at: string | null;
  attempts: number;
  last_error: string | null;
}

export interface JobsStatusReport {
  jobs: JobStatus[];
  pending: { count: number; tasks: PendingTask[] };
}

/**
 * Runs jobs now and reports on them: what the operator command uses, directly on the stores or
 * through a running embedded service (which hands it to its operator route).
 */
export interface JobOperator {
  readonly names: readonly string[];
  /** Runs a job to the end; progress lines go to `onProgress`. Answers the job's summary. */
  run(name: string, onProgress: (line: string) => void): Promise<Record<string, unknown>>;
  status(): Promise<JobsStatusReport>;
}
