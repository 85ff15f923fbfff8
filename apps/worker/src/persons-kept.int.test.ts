import { createInProcessBus, topicNames, type BatchHandler } from '@sightline/bus';
import type { RawEvent } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { changePersonProperties, deletePersons, findPersonByDistinctId, readDistinctIdCopy, readPersonCopy, splitPerson } from '@sightline/persons';
import type { MetadataStore, QueryOptions, Sql } from '@sightline/postgres';
import { createEmbeddedTestStores, createTestStores, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createEventsConsumer } from './events.consumer';

/**
 * A worker process keeps the persons its runs committed last and does not read them again
 * (WrittenPersons); its write then checks each kept person's version. Whatever another writer
 * did in between (the persons API, a deletion, a split, a merge or update by another worker
 * process, as after a partition moves) must survive, and the events must be enriched with the
 * person as it is now, exactly as a run that read it would.
 */
const TOKEN = 'phc_persons_kept_key';
const TEAM = 1;
const PERSONS_READ = 'JOIN persons p ON p.id = d.person_id';

/** A store that counts the statements reading a run's persons. */
function countingPersonReads(db: MetadataStore, reads: { count: number }): MetadataStore {
  const counting = (sql: Sql): Sql => ({
    query: <R>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
      if (text.includes(PERSONS_READ)) reads.count++;
      return sql.query<R>(text, params, options);
    },
    exec: (script) => sql.exec(script),
  });
  return {
    ...counting(db),
    transaction: (fn) => db.transaction((tx) => fn(counting(tx))),
    oneTransactionAtATime: db.oneTransactionAtATime,
    ping: () => db.ping(),
    close: () => db.close(),
  };
}

describe.each(['PostgreSQL', 'PGlite'] as const)('persons kept by a worker process, on %s', (store) => {
  let stores: Pick<TestStores, 'db' | 'ch' | 'close'>;
  /** Two worker processes on the same stores (each its own memory), and the store as the API uses it. */
  let workerA: BatchHandler;
  let workerB: BatchHandler;
  const readsA = { count: 0 };
  let offset = 0;
  let clock = Date.parse('2026-05-01T00:00:00Z');
  let prefix = 0;
  let ids: (name: string) => string;

  beforeAll(async () => {
    stores =
      store === 'PostgreSQL'
        ? await createTestStores('persons_kept', { projectApiKey: TOKEN })
        : await createEmbeddedTestStores('persons_kept', { projectApiKey: TOKEN });
    const worker = (db: MetadataStore) =>
      createEventsConsumer({
        ch: stores.ch,
        db,
        bus: createInProcessBus(silentLogger()),
        topics: topicNames('kept.'),
        resolveTeam: async () => TEAM,
        metrics: createMetrics(),
        logger: silentLogger(),
      });
    workerA = worker(countingPersonReads(stores.db, readsA));
    workerB = worker(stores.db);
  });
  afterAll(async () => {
    await stores.close();
  });
  beforeEach(() => {
    const p = `k${++prefix}-`;
    ids = (name) => `${p}${name}`;
  });

  const handle = (worker: BatchHandler, ...events: RawEvent[]) =>
    worker({
      topic: 'kept.events',
      partition: 0,
      messages: events.map((raw) => {
        clock += 1000;
        const { key, value } = busMessage({ timestamp: new Date(clock).toISOString(), ...raw }, { token: TOKEN, teamId: TEAM, nowMs: clock });
        return { key, value: Buffer.from(value), headers: {}, offset: String(offset++) };
      }),
    });
  const pageview = (distinctId: string, set: Record<string, unknown>): RawEvent => ({ event: '$pageview', distinct_id: distinctId, properties: { $set: set } });
  const person = (distinctId: string) => findPersonByDistinctId(stores.db, TEAM, distinctId);
  /** The person properties each event of the id was written with, in event order. */
  async function eventPersonProperties(distinctId: string): Promise<{ personId: string; properties: Record<string, unknown> }[]> {
    const rows = await (
      await stores.ch.query({
        query: `SELECT toString(person_id) AS person_id, person_properties FROM events FINAL WHERE distinct_id = {d:String} ORDER BY timestamp`,
        query_params: { d: distinctId },
        format: 'JSONEachRow',
      })
    ).json<{ person_id: string; person_properties: string }>();
    return rows.map((r) => ({ personId: r.person_id, properties: JSON.parse(r.person_properties) }));
  }

  it('reads no person a run of this process committed last, and writes its changes at the next version', async () => {
    await handle(workerA, pageview(ids('a'), { n: 1 }), pageview(ids('b'), { n: 1 }));
    const before = (await person(ids('a')))!;
    readsA.count = 0;
    await handle(workerA, pageview(ids('a'), { n: 2 }), pageview(ids('b'), { n: 2 }));
    expect(readsA.count).toBe(0);
    const after = (await person(ids('a')))!;
    expect(after).toMatchObject({ id: before.id, version: before.version + 1, properties: { n: 2 } });
    expect(await readPersonCopy(stores.ch, TEAM, before.uuid)).toMatchObject({ properties: { n: 2 }, version: before.version + 1 });
    expect((await eventPersonProperties(ids('a'))).map((e) => e.properties)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('keeps an API change made after the run it kept, whether the next run changes the person or not', async () => {
    await handle(workerA, pageview(ids('a'), { plan: 'free' }));
    const before = (await person(ids('a')))!;
    await changePersonProperties({ db: stores.db, ch: stores.ch }, TEAM, before.id, { set: { company: 'Acme' } });
    // Changes nothing the event knows of: without a check the event would carry the kept properties.
    await handle(workerA, pageview(ids('a'), { plan: 'free' }));
    expect((await eventPersonProperties(ids('a'))).at(-1)!.properties).toEqual({ plan: 'free', company: 'Acme' });
    await changePersonProperties({ db: stores.db, ch: stores.ch }, TEAM, before.id, { set: { seats: 5 } });
    await handle(workerA, pageview(ids('a'), { plan: 'pro' }));
    const after = (await person(ids('a')))!;
    expect(after.properties).toEqual({ plan: 'pro', company: 'Acme', seats: 5 });
    expect(after.version).toBe(before.version + 3);
    expect(await readPersonCopy(stores.ch, TEAM, before.uuid)).toMatchObject({
      properties: { plan: 'pro', company: 'Acme', seats: 5 },
      version: after.version,
    });
  });

  it('creates the person again from the event when it was deleted after the run it kept', async () => {
    await handle(workerA, pageview(ids('a'), { plan: 'free', old: true }));
    const before = (await person(ids('a')))!;
    await deletePersons({ db: stores.db, ch: stores.ch }, TEAM, [before.id], { deleteEvents: false, requestedBy: null });
    await handle(workerA, pageview(ids('a'), { plan: 'pro' }));
    const after = (await person(ids('a')))!;
    expect(after.id).not.toBe(before.id);
    expect(after.properties).toEqual({ plan: 'pro' });
    expect(await readPersonCopy(stores.ch, TEAM, before.uuid)).toMatchObject({ properties: { plan: 'pro' }, isDeleted: false });
  });

  it('follows a distinct id that a split moved to a person of its own after the run it kept', async () => {
    await handle(workerA, { event: '$identify', distinct_id: ids('main'), properties: { $anon_distinct_id: ids('anon'), $set: { email: 'x@example.com' } } });
    await handle(workerA, pageview(ids('anon'), { seen: 1 }), pageview(ids('main'), { seen: 1 }));
    const merged = (await person(ids('main')))!;
    await splitPerson({ db: stores.db, ch: stores.ch }, TEAM, merged.id, { mainDistinctId: ids('main') });
    await handle(workerA, pageview(ids('anon'), { seen: 2 }));
    const anon = (await person(ids('anon')))!;
    expect(anon.id).not.toBe(merged.id);
    expect(anon.properties).toEqual({ seen: 2 });
    expect((await person(ids('main')))!.properties).toEqual({ email: 'x@example.com', seen: 1 });
    expect((await eventPersonProperties(ids('anon'))).at(-1)).toEqual({ personId: anon.uuid, properties: { seen: 2 } });
    expect((await readDistinctIdCopy(stores.ch, TEAM, ids('anon')))!.personId).toBe(anon.uuid);
  });

  it('loses no update to another worker process writing the same persons in between (a moved partition), nor to its merges', async () => {
    await handle(workerA, pageview(ids('a'), { fromA: 1 }), pageview(ids('b'), { b: 1 }));
    await handle(workerB, pageview(ids('a'), { fromB: 1 }));
    await handle(workerA, pageview(ids('a'), { fromA: 2 }));
    expect((await person(ids('a')))!.properties).toEqual({ fromA: 2, fromB: 1 });
    await handle(workerB, pageview(ids('a'), { fromB: 2 }));
    await handle(workerA, pageview(ids('a'), { fromA: 3 }));
    expect((await person(ids('a')))!.properties).toEqual({ fromA: 3, fromB: 2 });

    // Worker B merges a's person into b's: worker A's kept a and b are both out of date.
    await handle(workerB, { event: '$identify', distinct_id: ids('b'), properties: { $anon_distinct_id: ids('a') } });
    await handle(workerA, pageview(ids('a'), { late: 1 }), pageview(ids('b'), { b: 2 }));
    const survivor = (await person(ids('b')))!;
    expect((await person(ids('a')))!.id).toBe(survivor.id);
    expect(survivor.properties).toEqual({ fromA: 3, fromB: 2, late: 1, b: 2 });
    // a's event came before b's in the run: b's own $set is not applied yet.
    expect((await eventPersonProperties(ids('a'))).at(-1)).toEqual({ personId: survivor.uuid, properties: { fromA: 3, fromB: 2, late: 1, b: 1 } });
  });
});
