import type { ClickHouseClient, ClickHouseLayout } from '@sightline/clickhouse';
import type { ScheduledJob } from '@sightline/jobs';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { PERSON_EVENTS_DELETION_CRON, PERSON_EVENTS_DELETION_JOB, runPersonEventsDeletion, type DeletionRunSummary } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';

export interface PersonEventsDeletionDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  clickhouseLayout?: ClickHouseLayout;
  logger: Logger;
  metrics: Metrics;
}

/**
 * One run of the weekly person-event deletion, logged and counted: what the scheduler (BullMQ
 * or the in-process cron), the embedded service's operator route and the operator command run.
 */
export async function runPersonEventsDeletionJob(deps: PersonEventsDeletionDeps, onProgress?: (line: string) => void): Promise<DeletionRunSummary> {
  const started = Date.now();
  deps.logger.info({ job: PERSON_EVENTS_DELETION_JOB }, 'person-event deletion started');
  try {
    const summary = await runPersonEventsDeletion(
      { db: deps.db, ch: deps.ch, layout: deps.clickhouseLayout },
      {
        onProgress: (p) => {
          deps.logger.info({ job: PERSON_EVENTS_DELETION_JOB, ...p }, 'person-event deletion progress');
          onProgress?.(`batch ${p.batch}: ${p.tasksDone}/${p.tasksTotal} tasks done, ${p.eventsDeleted} events deleted`);
        },
      },
    );
    deps.metrics.jobRuns.inc({ job: PERSON_EVENTS_DELETION_JOB, result: 'ok' });
    deps.logger.info({ job: PERSON_EVENTS_DELETION_JOB, ...summary, ms: Date.now() - started }, 'person-event deletion finished');
    return summary;
  } catch (error) {
    deps.metrics.jobRuns.inc({ job: PERSON_EVENTS_DELETION_JOB, result: 'error' });
    deps.logger.error({ job: PERSON_EVENTS_DELETION_JOB, err: error }, 'person-event deletion failed; its tasks stay pending');
    throw error;
  }
}

export function createPersonEventsDeletionJob(deps: PersonEventsDeletionDeps): ScheduledJob {
  return {
    name: PERSON_EVENTS_DELETION_JOB,
    cron: PERSON_EVENTS_DELETION_CRON,
    run: async () => void (await runPersonEventsDeletionJob(deps)),
  };
}
