import type { ClickHouseClient, ClickHouseLayout } from '@sightline/clickhouse';
import { UnknownJobError, type JobOperator } from '@sightline/jobs';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { listPendingDeletions, PERSON_EVENTS_DELETION_CRON, PERSON_EVENTS_DELETION_JOB } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { runPersonEventsDeletionJob } from './person-events-deletion.job';

/** Pending tasks a status report lists at most (the count covers all). */
const LISTED_TASKS = 100;

/**
 * The worker's jobs for an operator: run one now (the same function the scheduler runs) and
 * report pending tasks with the next scheduled time, which `nextRun` reads from wherever the
 * schedule lives (BullMQ in Redis, or the in-process cron).
 */
export function createJobOperator(deps: {
  db: MetadataStore;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  clickhouseLayout?: ClickHouseLayout;
  logger: Logger;
  metrics: Metrics;
  nextRun: (job: string, cron: string) => Promise<Date | null>;
}): JobOperator {
  const names = [PERSON_EVENTS_DELETION_JOB];
  return {
    names,
    async run(name, onProgress) {
      if (name !== PERSON_EVENTS_DELETION_JOB) throw new UnknownJobError(name, names);
      return { ...(await runPersonEventsDeletionJob(deps, onProgress)) };
    },
    async status() {
      const pending = await listPendingDeletions(deps.db, LISTED_TASKS);
      const next = await deps.nextRun(PERSON_EVENTS_DELETION_JOB, PERSON_EVENTS_DELETION_CRON);
      return {
        jobs: [{ name: PERSON_EVENTS_DELETION_JOB, cron: PERSON_EVENTS_DELETION_CRON, next_run: next?.toISOString() ?? null }],
        pending: {
          count: pending.count,
          tasks: pending.tasks.map((t) => ({
            id: t.id,
            team_id: t.teamId,
            person_uuid: t.personUuid,
            distinct_ids: t.distinctIds,
            created_at: t.createdAt,
            started_at: t.startedAt,
            attempts: t.attempts,
            last_error: t.lastError,
          })),
        },
      };
    },
  };
}
