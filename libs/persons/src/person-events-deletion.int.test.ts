import { insertEvents, type ClickHouseClient } from '@sightline/clickhouse';
import { createTestPerson, createTestStores, testEventRow, waitFor, type TestPerson, type TestStores } from '@sightline/testkit';
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
    // d3 comes back: same uuid (UUIDv5 of the project and distinct id), events stored after the request.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await insertEvents(stores.ch, [testEventRow({ event: 'back', atMs: NOW, distinctId: 'd3', personId: persons[3]!.uuid })]);
    expect(await runPersonEventsDeletion(stores)).toMatchObject({ tasks: 1, eventsDeleted: 3 });
    const left = await (
      await stores.ch.query({ query: "SELECT event FROM events FINAL WHERE distinct_id = 'd3'", format: 'JSONEachRow' })
    ).json<{ event: string }>();
    expect(left).toEqual([{ event: 'back' }]);
  });
});
