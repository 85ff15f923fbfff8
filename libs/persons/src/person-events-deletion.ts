import { mutationsSource, mutationTarget, queryClickhouse, SINGLE_SERVER, type ClickHouseClient, type ClickHouseLayout } from '@sightline/clickhouse';
import type { MetadataStore } from '@sightline/postgres';

/** The job's name, as schedulers, metrics and the operator command know it. */
export const PERSON_EVENTS_DELETION_JOB = 'person-events-deletion';
/** Sundays 05:00 UTC, when PostHog runs its own batched person-event deletion. */
export const PERSON_EVENTS_DELETION_CRON = '0 5 * * 0';

export interface PersonEventsDeletionOptions {
  /** Persons whose events one ClickHouse mutation deletes (the mutation's parameters grow with it). */
  batchSize?: number;
  /**
   * A task claimed by a run that has not finished it after this long is taken over: that run
   * was killed or stalled. Its work is repeated safely (deleting deleted rows deletes nothing).
   */
  staleAfterMs?: number;
  /** Called after each batch, for logs and the operator command's progress line. */
  onProgress?: (progress: DeletionProgress) => void;
}

export interface DeletionProgress {
  batch: number;
  tasksDone: number;
  tasksTotal: number;
  eventsDeleted: number;
}

export interface DeletionRunSummary {
  tasks: number;
  eventsDeleted: number;
  personRowsDeleted: number;
  batches: number;
}

/** The stores a deletion works on; `layout` says how ClickHouse's tables are laid out (default: one server). */
export interface DeletionStores {
  db: MetadataStore;
  ch: ClickHouseClient;
  layout?: ClickHouseLayout;
}

interface ClaimedTask {
  id: number;
  team_id: number;
  person_uuid: string;
  distinct_ids: string[];
  created_at: Date | string;
  events_deleted: string | null;
}

const DEFAULT_BATCH = 100;
const DEFAULT_STALE_AFTER_MS = 30 * 60_000;

/** How often a running mutation is checked, and how long one may take before the run gives up (its task stays pending). */
const MUTATION_POLL_MS = 500;
const MUTATION_TIMEOUT_MS = 6 * 3_600_000;

/**
 * Runs a mutation (ALTER TABLE … DELETE) and waits until ClickHouse reports it done, by polling
 * system.mutations rather than holding the request open: a large deletion outlasts any HTTP
 * timeout. A mutation ClickHouse reports failing is an error (the task stays pending). On a
 * cluster the events' mutation runs on every shard's table (ON CLUSTER) and is waited for on
 * every replica; a replicated table's mutation reaches its replicas through Keeper.
 */
async function mutateAndWait(ch: ClickHouseClient, layout: ClickHouseLayout, table: string, where: string, params: Record<string, unknown>): Promise<void> {
  const target = mutationTarget(layout, table);
  await ch.command({ query: `ALTER TABLE ${target.clause} DELETE WHERE ${where}`, query_params: params });
  const deadline = Date.now() + MUTATION_TIMEOUT_MS;
  for (;;) {
    const [state] = await queryClickhouse<{ running: string; failure: string }>(ch, {
      kind: 'deletion.mutations_running',
      teamId: null,
      sql: `SELECT count() AS running, any(latest_fail_reason) AS failure FROM ${mutationsSource(layout)}
                WHERE database = currentDatabase() AND table = {table:String} AND is_done = 0`,
      params: { table: target.table },
    });
    if (Number(state?.running ?? 0) === 0) return;
    if (state?.failure) throw new Error(`ClickHouse could not delete from ${table}: ${state.failure}`);
    if (Date.now() > deadline) throw new Error(`the deletion from ${table} did not finish within ${MUTATION_TIMEOUT_MS / 3_600_000} hours`);
    await new Promise((resolve) => setTimeout(resolve, MUTATION_POLL_MS));
  }
}

/**
 * Deletes the events of persons deleted with `delete_events=true` (queued_deletions), batch by
 * batch: a batch of tasks is claimed, its events counted and deleted with one mutation per
 * project (waited for), the persons' leftover rows removed from ClickHouse's person tables, and
 * the tasks marked done with their counts. An event is the person's when it carries the person's
 * id or one of its distinct ids, and was stored before the deletion was asked for (a person created
 * again from the same distinct id keeps its new events).
 *
 * Idempotent: a task is done only after its mutations finished; a run killed in between leaves
 * its tasks claimed, and the next run (after `staleAfterMs`) repeats them, keeping the event count
 * of the first attempt. Concurrent runs claim different tasks (SKIP LOCKED).
 */
export async function runPersonEventsDeletion(stores: DeletionStores, options: PersonEventsDeletionOptions = {}): Promise<DeletionRunSummary> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const summary: DeletionRunSummary = { tasks: 0, eventsDeleted: 0, personRowsDeleted: 0, batches: 0 };
  const [pending] = await stores.db.query<{ n: string }>('SELECT count(*) AS n FROM queued_deletions WHERE done_at IS NULL');
  const tasksTotal = Number(pending?.n ?? 0);
  for (;;) {
    const tasks = await claimTasks(stores.db, batchSize, staleAfterMs);
    if (tasks.length === 0) return summary;
    summary.batches += 1;
    try {
      await deleteBatch(stores, tasks, summary);
    } catch (error) {
      // Released at once, so a retry (or the operator command) takes the batch again.
      await stores.db.query('UPDATE queued_deletions SET started_at = NULL, last_error = $2 WHERE id = ANY($1::int[]) AND done_at IS NULL', [
        tasks.map((t) => t.id),
        error instanceof Error ? error.message.slice(0, 2000) : String(error).slice(0, 2000),
      ]);
      throw error;
    }
    options.onProgress?.({
      batch: summary.batches,
      tasksDone: summary.tasks,
      tasksTotal: Math.max(tasksTotal, summary.tasks),
      eventsDeleted: summary.eventsDeleted,
    });
  }
}

async function deleteBatch(stores: DeletionStores, tasks: ClaimedTask[], summary: DeletionRunSummary): Promise<void> {
  for (const [teamId, teamTasks] of groupBy(tasks, (t) => t.team_id)) {
    const counts = await countEvents(stores.ch, teamId, teamTasks);
    // Recorded before the mutation: a repeated attempt finds fewer (or no) events left.
    await stores.db.query(
      `UPDATE queued_deletions q SET events_deleted = COALESCE(q.events_deleted, x.n)
           FROM unnest($1::int[], $2::bigint[]) AS x(id, n) WHERE q.id = x.id`,
      [teamTasks.map((t) => t.id), teamTasks.map((t) => counts.get(t.id) ?? 0)],
    );
    await deleteEvents(stores, teamId, teamTasks);
    const personRows = await deletePersonRows(stores, teamId, teamTasks);
    await stores.db.query(
      `UPDATE queued_deletions q SET done_at = now(), last_error = NULL, person_rows_deleted = x.n
           FROM unnest($1::int[], $2::int[]) AS x(id, n) WHERE q.id = x.id`,
      [teamTasks.map((t) => t.id), teamTasks.map((t) => personRows.get(t.person_uuid) ?? 0)],
    );
    summary.tasks += teamTasks.length;
    summary.personRowsDeleted += [...personRows.values()].reduce((a, b) => a + b, 0);
    summary.eventsDeleted += teamTasks.reduce((n, t) => n + (t.events_deleted === null ? (counts.get(t.id) ?? 0) : Number(t.events_deleted)), 0);
  }
}

/** Claims up to `limit` pending tasks: never started, or started by a run that stopped (stale). */
async function claimTasks(db: MetadataStore, limit: number, staleAfterMs: number): Promise<ClaimedTask[]> {
  const rows = await db.query<ClaimedTask>(
    `UPDATE queued_deletions SET started_at = now(), attempts = attempts + 1
      WHERE id IN (SELECT id FROM queued_deletions
                    WHERE done_at IS NULL AND (started_at IS NULL OR started_at <= now() - make_interval(secs => $2::float8 / 1000))
                    ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, team_id, person_uuid::text AS person_uuid, distinct_ids, created_at, events_deleted`,
    [limit, staleAfterMs],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id), team_id: Number(r.team_id) })).sort((a, b) => a.id - b.id);
}

/**
 * The events of a batch's persons: per task, its person id or one of its distinct ids, stored
 * no later than the task was queued. Arrays of equal length carry each task's cut-off.
 */
function batchCondition(tasks: ClaimedTask[]) {
  const uuids = tasks.map((t) => t.person_uuid);
  const cutoffs = tasks.map((t) => new Date(t.created_at).getTime() / 1000);
  const distinctIds = tasks.flatMap((t) => t.distinct_ids);
  const distinctIdCutoffs = tasks.flatMap((t) => t.distinct_ids.map(() => new Date(t.created_at).getTime() / 1000));
  return {
    sql: `team_id = {team:Int64} AND (
        (has({uuids:Array(UUID)}, person_id) AND toUnixTimestamp64Micro(inserted_at) <= 1000000 * {cutoffs:Array(Float64)}[indexOf({uuids:Array(UUID)}, person_id)])
        OR (has({dids:Array(String)}, distinct_id) AND toUnixTimestamp64Micro(inserted_at) <= 1000000 * {didCutoffs:Array(Float64)}[indexOf({dids:Array(String)}, distinct_id)]))`,
    params: { uuids, cutoffs, dids: distinctIds, didCutoffs: distinctIdCutoffs },
  };
}

async function countEvents(ch: ClickHouseClient, teamId: number, tasks: ClaimedTask[]): Promise<Map<number, number>> {
  const { sql, params } = batchCondition(tasks);
  const rows = await queryClickhouse<{ person: string; distinct_id: string; n: string }>(ch, {
    kind: 'deletion.count_events',
    teamId,
    sql: `SELECT toString(person_id) AS person, distinct_id, count() AS n FROM events FINAL WHERE ${sql} GROUP BY person_id, distinct_id`,
    params: { team: teamId, ...params },
  });
  const counts = new Map<number, number>();
  for (const row of rows) {
    // An event is counted for the task of its person, else for the task naming its distinct id.
    const task = tasks.find((t) => t.person_uuid === row.person) ?? tasks.find((t) => t.distinct_ids.includes(row.distinct_id));
    if (task) counts.set(task.id, (counts.get(task.id) ?? 0) + Number(row.n));
  }
  return counts;
}

async function deleteEvents(stores: DeletionStores, teamId: number, tasks: ClaimedTask[]): Promise<void> {
  const { sql, params } = batchCondition(tasks);
  await mutateAndWait(stores.ch, stores.layout ?? SINGLE_SERVER, 'events', sql, { team: teamId, ...params });
}

/**
 * The persons' rows in ClickHouse's person tables, up to the version their deletion wrote: a
 * person created again with the same uuid (or distinct id) has higher versions and stays.
 * Answers how many entries (the person, each distinct id) each person had.
 */
async function deletePersonRows(stores: DeletionStores, teamId: number, tasks: ClaimedTask[]): Promise<Map<string, number>> {
  const uuids = [...new Set(tasks.map((t) => t.person_uuid))];
  const versions = await stores.db.query<{ uuid: string; version: string }>(
    'SELECT uuid::text AS uuid, version FROM deleted_person_versions WHERE team_id = $1 AND uuid = ANY($2::uuid[])',
    [teamId, uuids],
  );
  const counts = new Map<string, number>();
  if (versions.length === 0) return counts;
  const params = { team: teamId, uuids: versions.map((v) => v.uuid), versions: versions.map((v) => Number(v.version)) };
  const personCondition = `team_id = {team:Int64} AND has({uuids:Array(UUID)}, id) AND version <= {versions:Array(UInt64)}[indexOf({uuids:Array(UUID)}, id)]`;
  const distinctIdCondition = `team_id = {team:Int64} AND has({uuids:Array(UUID)}, person_id) AND version <= {versions:Array(UInt64)}[indexOf({uuids:Array(UUID)}, person_id)]`;
  const rows = await queryClickhouse<{ person: string; n: string }>(stores.ch, {
    kind: 'deletion.count_person_rows',
    teamId,
    // Entries, not stored rows: how many versions of a row are still unmerged is ClickHouse's business.
    sql: `SELECT person, count() AS n FROM (
                SELECT DISTINCT toString(id) AS person, '' AS distinct_id FROM person WHERE ${personCondition}
                UNION ALL SELECT DISTINCT toString(person_id) AS person, distinct_id FROM person_distinct_id2 WHERE ${distinctIdCondition})
              GROUP BY person`,
    params,
  });
  for (const row of rows) counts.set(row.person, Number(row.n));
  await mutateAndWait(stores.ch, stores.layout ?? SINGLE_SERVER, 'person', personCondition, params);
  await mutateAndWait(stores.ch, stores.layout ?? SINGLE_SERVER, 'person_distinct_id2', distinctIdCondition, params);
  return counts;
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** A pending (or running) task, as the operator command lists it. */
export interface PendingDeletionTask {
  id: number;
  teamId: number;
  personUuid: string;
  distinctIds: string[];
  createdAt: string;
  startedAt: string | null;
  attempts: number;
  lastError: string | null;
}

export async function listPendingDeletions(db: MetadataStore, limit = 1000): Promise<{ count: number; tasks: PendingDeletionTask[] }> {
  const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM queued_deletions WHERE done_at IS NULL');
  const rows = await db.query<{
    id: number;
    team_id: number;
    person_uuid: string;
    distinct_ids: string[];
    created_at: Date | string;
    started_at: Date | string | null;
    attempts: number;
    last_error: string | null;
  }>(
    `SELECT id, team_id, person_uuid::text AS person_uuid, distinct_ids, created_at, started_at, attempts, last_error
       FROM queued_deletions WHERE done_at IS NULL ORDER BY id LIMIT $1`,
    [limit],
  );
  return {
    count: Number(count?.n ?? 0),
    tasks: rows.map((r) => ({
      id: Number(r.id),
      teamId: Number(r.team_id),
      personUuid: r.person_uuid,
      distinctIds: r.distinct_ids ?? [],
      createdAt: new Date(r.created_at).toISOString(),
      startedAt: r.started_at === null ? null : new Date(r.started_at).toISOString(),
      attempts: Number(r.attempts),
      lastError: r.last_error,
    })),
  };
}
