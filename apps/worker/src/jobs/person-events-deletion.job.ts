import type { ClickHouseClient } from '@sightline/clickhouse';
import type { ScheduledJob } from '@sightline/jobs';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';

export const PERSON_EVENTS_DELETION_CRON = '0 5 * * 0'; // Sundays 05:00 UTC

const BATCH = 1000;

/**
 * Deletes the events of persons queued for deletion (DELETE person with delete_events=true),
 * batched weekly so the expensive mutation runs once per team per week. Idempotent: rows are
 * marked done only after their mutation finished, so a failed run is simply repeated.
 */
export async function runPersonEventsDeletion(deps: { db: MetadataStore; ch: ClickHouseClient; logger: Logger }): Promise<number> {
  let deleted = 0;
  for (;;) {
    const pending = await deps.db.query<{ id: number; team_id: number; person_uuid: string }>(
      'SELECT id, team_id, person_uuid FROM queued_deletions WHERE done_at IS NULL ORDER BY id LIMIT $1',
      [BATCH],
    );
    if (pending.length === 0) return deleted;
    const byTeam = new Map<number, string[]>();
    for (const row of pending) byTeam.set(row.team_id, [...(byTeam.get(row.team_id) ?? []), row.person_uuid]);
    for (const [teamId, persons] of byTeam) {
      await deps.ch.command({
        query: 'ALTER TABLE events DELETE WHERE team_id = {team:Int64} AND person_id IN {persons:Array(UUID)}',
        query_params: { team: teamId, persons },
        clickhouse_settings: { mutations_sync: '1' },
      });
      deps.logger.info({ teamId, persons: persons.length }, 'deleted events of deleted persons');
    }
    await deps.db.query('UPDATE queued_deletions SET done_at = now() WHERE id = ANY($1::int[])', [pending.map((r) => r.id)]);
    deleted += pending.length;
  }
}

export function createPersonEventsDeletionJob(deps: { db: MetadataStore; ch: ClickHouseClient; logger: Logger; metrics: Metrics }): ScheduledJob {
  return {
    name: 'person-events-deletion',
    cron: PERSON_EVENTS_DELETION_CRON,
    run: async () => {
      try {
        await runPersonEventsDeletion(deps);
        deps.metrics.jobRuns.inc({ job: 'person-events-deletion', result: 'ok' });
      } catch (error) {
        deps.metrics.jobRuns.inc({ job: 'person-events-deletion', result: 'error' });
        throw error;
      }
    },
  };
}
