import { createInProcessBus, topicNames, type BatchHandler } from '@sightline/bus';
import type { RawEvent } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { changePersonProperties, findPersonByDistinctId, readPersonCopy } from '@sightline/persons';
import { createMetadataStore, type MetadataStore, type QueryOptions, type Sql } from '@sightline/postgres';
import { createTestStores, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createEventsConsumer } from './events.consumer';

/**
 * A run without merge requests reads its persons without row locks and writes each changed
 * person only if its version is still the one it read. Here another writer (the persons API,
 * which locks the row with a short lock timeout) changes the person between the run's read and
 * its write: it must not wait for the run, and the run must then keep that change and apply its
 * own events on top of it, in PostgreSQL and in the ClickHouse copy.
 */
const TOKEN = 'phc_persons_optimistic_key';
const TEAM = 1;

/** A store whose transactions call `afterPersonRead` (once per arming) right after the statement that reads a run's persons. */
function withHookAfterPersonRead(db: MetadataStore, hook: { armed: (() => Promise<void>) | null }): MetadataStore {
  const hooked = (tx: Sql): Sql => ({
    query: async <R>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
      const rows = await tx.query<R>(text, params, options);
      if (text.includes('JOIN persons p ON p.id = d.person_id') && hook.armed) {
        const run = hook.armed;
        hook.armed = null;
        await run();
      }
      return rows;
    },
    exec: (script) => tx.exec(script),
  });
  return {
    query: <R>(text: string, params?: readonly unknown[], options?: QueryOptions) => db.query<R>(text, params, options),
    exec: (script) => db.exec(script),
    transaction: (fn) => db.transaction((tx) => fn(hooked(tx))),
    oneTransactionAtATime: db.oneTransactionAtATime,
    ping: () => db.ping(),
    close: () => db.close(),
  };
}

describe('a run without merges writes persons it read unlocked only at the version it read', () => {
  let stores: TestStores;
  let apiDb: MetadataStore;
  let worker: BatchHandler;
  const hook: { armed: (() => Promise<void>) | null } = { armed: null };
  let offset = 0;
  let clock = Date.parse('2026-04-01T00:00:00Z');

  beforeAll(async () => {
    stores = await createTestStores('persons_optimistic', { projectApiKey: TOKEN });
    // The API's own connection: a row lock held by the worker makes it fail after 2 s instead of waiting forever.
    const api = await createMetadataStore({ url: stores.postgresUrl });
    apiDb = {
      ...api,
      query: (text, params, options) => api.query(text, params, options),
      exec: (script) => api.exec(script),
      transaction: (fn) =>
        api.transaction(async (tx) => {
          await tx.query("SET LOCAL lock_timeout = '2s'");
          return fn(tx);
        }),
      oneTransactionAtATime: api.oneTransactionAtATime,
      ping: () => api.ping(),
      close: () => api.close(),
    };
    worker = createEventsConsumer({
      ch: stores.ch,
      db: withHookAfterPersonRead(stores.db, hook),
      bus: createInProcessBus(silentLogger()),
      topics: topicNames('optimistic.'),
      resolveTeam: async () => TEAM,
      metrics: createMetrics(),
      logger: silentLogger(),
      // The read path: a person this process kept is not read (persons-kept.int.test.ts).
      keptPersons: 0,
    });
  });
  afterAll(async () => {
    await apiDb.close();
    await stores.close();
  });

  const handle = (...events: RawEvent[]) =>
    worker({
      topic: 'optimistic.events',
      partition: 0,
      messages: events.map((raw) => {
        clock += 1000;
        const { key, value } = busMessage({ timestamp: new Date(clock).toISOString(), ...raw }, { token: TOKEN, teamId: TEAM, nowMs: clock });
        return { key, value: Buffer.from(value), headers: {}, offset: String(offset++) };
      }),
    });

  it('keeps an API change made between its read and its write, and applies its own events on top', async () => {
    await handle({ event: '$pageview', distinct_id: 'opt-a', properties: { $set: { plan: 'free', seen: 1 } } });
    const before = (await findPersonByDistinctId(stores.db, TEAM, 'opt-a'))!;

    hook.armed = async () => {
      const changed = await changePersonProperties({ db: apiDb, ch: stores.ch }, TEAM, before.id, { set: { company: 'Acme', plan: 'api' } });
      expect(changed?.version).toBe(before.version + 1);
    };
    await handle({ event: '$pageview', distinct_id: 'opt-a', properties: { $set: { plan: 'pro', seen: 2 } } });
    expect(hook.armed).toBeNull();

    const after = (await findPersonByDistinctId(stores.db, TEAM, 'opt-a'))!;
    // The API's company survives; the event, applied after it, sets plan and seen.
    expect(after.properties).toEqual({ plan: 'pro', seen: 2, company: 'Acme' });
    expect(after.version).toBe(before.version + 2);
    const copy = await readPersonCopy(stores.ch, TEAM, before.uuid);
    expect(copy).toMatchObject({ properties: { plan: 'pro', seen: 2, company: 'Acme' }, version: before.version + 2, isDeleted: false });
  });

  it('keeps a person deleted between its read and its write deleted, and creates it again from the event', async () => {
    await handle({ event: '$pageview', distinct_id: 'opt-b', properties: { $set: { seen: 1 } } });
    const before = (await findPersonByDistinctId(stores.db, TEAM, 'opt-b'))!;

    hook.armed = async () => {
      await apiDb.transaction(async (tx) => {
        await tx.query('SELECT id FROM persons WHERE id = $1 FOR UPDATE', [before.id]);
        await tx.query('DELETE FROM persons WHERE id = $1', [before.id]);
      });
    };
    await handle({ event: '$pageview', distinct_id: 'opt-b', properties: { $set: { seen: 2 } } });
    expect(hook.armed).toBeNull();

    // Worked out again from a fresh read: the id has no person, so the event creates one with only its own $set.
    const after = (await findPersonByDistinctId(stores.db, TEAM, 'opt-b'))!;
    expect(after.id).not.toBe(before.id);
    expect(after.properties).toEqual({ seen: 2 });
  });
});
