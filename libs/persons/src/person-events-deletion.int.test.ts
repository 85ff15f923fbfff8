import { spawn } from 'node:child_process';
import path from 'node:path';
import { createAnalyticsStore, insertEvents, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import {
  createTestClickHouseDatabase,
  createTestPerson,
  createTestPostgresDatabase,
  createTestStores,
  testEventRow,
  waitFor,
  type TestPerson,
  type TestStores,
} from '@sightline/testkit';
import { runPersonEventsDeletion, listPendingDeletions, type DeletionProgress } from './person-events-deletion';
import { deletePersons } from './person-writes';

const NOW = Date.parse('2026-11-20T12:00:00Z');

/**
 * ClickHouse as a run sees it when something happens to it at the events deletion: `hang` sends
 * the mutation and never answers (the process was killed while waiting), `fail` refuses it.
 */
function faultyAtEventsDeletion(ch: ClickHouseClient, fault: 'hang' | 'fail'): ClickHouseClient {
  return new Proxy(ch, {
    get(target, property, receiver) {
      if (property !== 'command') return Reflect.get(target, property, receiver);
      return async (params: Parameters<ClickHouseClient['command']>[0]) => {
        if (!params.query.startsWith('ALTER TABLE events DELETE')) return target.command(params);
        if (fault === 'fail') throw new Error('Code: 241. MEMORY_LIMIT_EXCEEDED (simulated)');
        await target.command(params);
        return new Promise(() => undefined);
      };
    },
  });
}

describe('person-event deletion job', () => {
  let stores: TestStores;
  let persons: TestPerson[];
  const eventsOf = async (distinctIds: string[]) =>
    Number(
      (
        await (
          await stores.ch.query({
            query: 'SELECT count() AS n FROM events FINAL WHERE team_id = 1 AND distinct_id IN {ids:Array(String)}',
            query_params: { ids: distinctIds },
            format: 'JSONEachRow',
          })
        ).json<{ n: string }>()
      )[0]!.n,
    );

  beforeEach(async () => {
    stores = await createTestStores('deletion_job');
    persons = [];
    for (let i = 0; i < 5; i++) {
      persons.push(await createTestPerson(stores, { distinctIds: [`d${i}`] }));
      await insertEvents(
        stores.ch,
        [0, 1, 2].map((h) => testEventRow({ event: 'e', atMs: NOW - h * 3_600_000, distinctId: `d${i}`, personId: persons[i]!.uuid })),
      );
    }
  });
  afterEach(() => stores.close());

  const deleteWithEvents = (indexes: number[]) =>
    deletePersons(
      stores,
      1,
      indexes.map((i) => persons[i]!.id),
      { deleteEvents: true, requestedBy: null },
    );

  it('works in bounded batches, reports progress and marks every task done with its counts', async () => {
    await deleteWithEvents([0, 1, 2, 3]);
    const progress: DeletionProgress[] = [];
    const summary = await runPersonEventsDeletion(stores, { batchSize: 3, onProgress: (p) => progress.push(p) });
    expect(summary).toEqual({ tasks: 4, eventsDeleted: 12, personRowsDeleted: 8, batches: 2 });
    expect(progress).toEqual([
      { batch: 1, tasksDone: 3, tasksTotal: 4, eventsDeleted: 9 },
      { batch: 2, tasksDone: 4, tasksTotal: 4, eventsDeleted: 12 },
    ]);
    expect(await eventsOf(['d0', 'd1', 'd2', 'd3'])).toBe(0);
    expect(await eventsOf(['d4'])).toBe(3);
    const tasks = await stores.db.query<{ events_deleted: string; person_rows_deleted: number; attempts: number; done: boolean; started: boolean }>(
      'SELECT events_deleted, person_rows_deleted, attempts, done_at IS NOT NULL AS done, started_at IS NOT NULL AS started FROM queued_deletions ORDER BY id',
    );
    expect(tasks).toEqual(Array(4).fill({ events_deleted: '3', person_rows_deleted: 2, attempts: 1, done: true, started: true }));
    expect((await listPendingDeletions(stores.db)).count).toBe(0);
  });

  it('a run killed while its mutation runs is finished by the next run, with the first count kept', async () => {
    await deleteWithEvents([1, 2]);
    const killed = runPersonEventsDeletion({ db: stores.db, ch: faultyAtEventsDeletion(stores.ch, 'hang') });
    void killed;
    // The mutation was sent; the run never comes back (as if the process died waiting).
    await waitFor(async () => (await eventsOf(['d1', 'd2'])) === 0, { timeoutMs: 20_000 });
    const pending = await listPendingDeletions(stores.db);
    expect(pending.count).toBe(2);
    expect(pending.tasks.every((t) => t.startedAt !== null && t.attempts === 1)).toBe(true);
    // A run while the claim is fresh leaves the tasks to the (possibly still running) first one.
    expect(await runPersonEventsDeletion(stores)).toMatchObject({ tasks: 0 });
    // Once the claim is stale, the next run repeats what was left and finishes.
    const next = await runPersonEventsDeletion(stores, { staleAfterMs: 0 });
    expect(next).toEqual({ tasks: 2, eventsDeleted: 6, personRowsDeleted: 4, batches: 1 });
    const tasks = await stores.db.query<{ events_deleted: string; attempts: number; done: boolean }>(
      'SELECT events_deleted, attempts, done_at IS NOT NULL AS done FROM queued_deletions ORDER BY id',
    );
    expect(tasks).toEqual([
      { events_deleted: '3', attempts: 2, done: true },
      { events_deleted: '3', attempts: 2, done: true },
    ]);
    expect(await eventsOf(['d0', 'd3', 'd4'])).toBe(9);
  });

  it('a failed run releases its batch with the error; a retry completes it', async () => {
    await deleteWithEvents([4]);
    await expect(runPersonEventsDeletion({ db: stores.db, ch: faultyAtEventsDeletion(stores.ch, 'fail') })).rejects.toThrow(/MEMORY_LIMIT_EXCEEDED/);
    const [failed] = (await listPendingDeletions(stores.db)).tasks;
    expect(failed).toMatchObject({ startedAt: null, attempts: 1, lastError: 'Code: 241. MEMORY_LIMIT_EXCEEDED (simulated)' });
    expect(await eventsOf(['d4'])).toBe(3);
    expect(await runPersonEventsDeletion(stores)).toEqual({ tasks: 1, eventsDeleted: 3, personRowsDeleted: 2, batches: 1 });
    expect(await eventsOf(['d4'])).toBe(0);
    expect(await eventsOf(['d0', 'd1', 'd2', 'd3'])).toBe(12);
  });

  it('keeps the events of a person created again from the same distinct id after the deletion was asked for', async () => {
    await deleteWithEvents([3]);
    // d3 comes back: same uuid (UUIDv5 of the project and distinct id), events stored after the
    // request (inserted_at is the clock at insert; the cutoff is the task's created_at).
    const [task] = (await listPendingDeletions(stores.db)).tasks;
    await waitFor(() => Date.now() > Date.parse(task!.createdAt), { timeoutMs: 5000, intervalMs: 1, description: 'the clock past the request' });
    await insertEvents(stores.ch, [testEventRow({ event: 'back', atMs: NOW, distinctId: 'd3', personId: persons[3]!.uuid })]);
    expect(await runPersonEventsDeletion(stores)).toMatchObject({ tasks: 1, eventsDeleted: 3 });
    const left = await (
      await stores.ch.query({ query: "SELECT event FROM events FINAL WHERE distinct_id = 'd3'", format: 'JSONEachRow' })
    ).json<{ event: string }>();
    expect(left).toEqual([{ event: 'back' }]);
  });
});

describe('person-event deletion job killed for real', () => {
  it('a run whose process is killed (SIGKILL) between batches is finished by the next run', async () => {
    const pg = await createTestPostgresDatabase('deletion_kill');
    const chDb = await createTestClickHouseDatabase('deletion_kill');
    const db = await createMetadataStore({ url: pg.url });
    const ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    try {
      await migratePostgres(db);
      await migrateClickHouse(ch);
      const ids: number[] = [];
      for (let i = 0; i < 8; i++) {
        const person = await createTestPerson({ db, ch }, { distinctIds: [`k${i}`] });
        ids.push(person.id);
        await insertEvents(
          ch,
          [0, 1].map((h) => testEventRow({ event: 'e', atMs: NOW - h * 3_600_000, distinctId: `k${i}`, personId: person.uuid })),
        );
      }
      await insertEvents(ch, [testEventRow({ event: 'e', atMs: NOW, distinctId: 'bystander' })]);
      await deletePersons({ db, ch }, 1, ids, { deleteEvents: true, requestedBy: null });
      // The job in its own process, one person per batch, killed once its first batch is done.
      const script = `
        const { createMetadataStore } = require('@sightline/postgres');
        const { createAnalyticsStore } = require('@sightline/clickhouse');
        const { runPersonEventsDeletion } = require('@sightline/persons');
        (async () => {
          const db = await createMetadataStore({ url: process.env.PG_URL });
          const ch = createAnalyticsStore({ url: process.env.CH_URL, user: 'default', password: '', database: process.env.CH_DB });
          await runPersonEventsDeletion({ db, ch }, { batchSize: 1 });
          process.stdout.write('finished');
        })();`;
      const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
        cwd: path.resolve(__dirname, '..', '..', '..'),
        env: { ...process.env, PG_URL: pg.url, CH_URL: chDb.url, CH_DB: chDb.database },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      const doneCount = async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM queued_deletions WHERE done_at IS NOT NULL'))[0]!.n);
      await waitFor(async () => (await doneCount()) >= 1, { timeoutMs: 60_000, intervalMs: 5, description: 'the first batch done' });
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(output).not.toContain('finished');
      const left = 8 - (await doneCount());
      expect(left).toBeGreaterThan(0);
      // The killed run's claim is stale at once here; by default the next run waits 30 minutes for it.
      const next = await runPersonEventsDeletion({ db, ch }, { staleAfterMs: 0 });
      expect(next.tasks).toBe(left);
      expect(await doneCount()).toBe(8);
      const remaining = await (await ch.query({ query: 'SELECT distinct_id FROM events FINAL', format: 'JSONEachRow' })).json<{ distinct_id: string }>();
      expect(remaining).toEqual([{ distinct_id: 'bystander' }]);
      const counts = await db.query<{ events_deleted: string }>('SELECT events_deleted FROM queued_deletions ORDER BY id');
      expect(counts.map((c) => Number(c.events_deleted))).toEqual(Array(8).fill(2));
    } finally {
      await ch.close();
      await db.close();
      await pg.drop();
      await chDb.drop();
    }
  });
});
