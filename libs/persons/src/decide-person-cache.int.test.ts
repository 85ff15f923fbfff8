import { bootstrapInstance } from '@sightline/accounts';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createMetadataStore, migratePostgres, type MetadataStore, type Sql } from '@sightline/postgres';
import { createTestPostgresDatabase, insertCohort, insertGroup, insertGroupType, insertPerson, waitFor, type TestPostgresDatabase } from '@sightline/testkit';
import { createDecidePersonCache, type PersonChange } from './decide-person-cache';
import { readStoredPerson, readStoredPersons } from './flag-person-reads';

/** The store as the cache sees it, counting its statements; `hold()` keeps the next statements waiting until released. */
/** One turn of the event loop: reads are queued and flushed on microtasks, all run by then. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function observedStore(db: Sql) {
  const statements: { text: string; params: readonly unknown[] }[] = [];
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  const sql: Sql = {
    async query(text, params, options) {
      statements.push({ text, params: params ?? [] });
      if (gate) await gate;
      return db.query(text, params, options);
    },
    exec: (script) => db.exec(script),
  };
  return {
    sql,
    statements,
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release() {
      gate = null;
      open();
    },
  };
}

describe('decide person cache: batched store reads', () => {
  let pg: TestPostgresDatabase;
  let db: MetadataStore;
  let teamId: number;
  const company = (key: string) => [{ index: 0, key }];

  beforeAll(async () => {
    pg = await createTestPostgresDatabase('decide_reads');
    db = await createMetadataStore({ url: pg.url });
    await migratePostgres(db);
    teamId = (await bootstrapInstance(db, { projectApiKey: 'phc_decide_reads_token' })).projectId;
    await insertGroupType(db, teamId, 'company', 0);
    await insertGroup(db, teamId, 0, 'acme', { seats: 40 });
    await insertGroup(db, teamId, 0, 'globex', { seats: 7 });
    const ann = await insertPerson(db, teamId, ['ann', 'ann-anon'], { plan: 'pro' });
    await insertPerson(db, teamId, ['bob'], { plan: 'free' });
    await insertCohort(db, teamId, { isStatic: true, personIds: [ann] });
    await db.query(`INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key) VALUES ($1, $2, 'continuity', 'ann-anon')`, [
      teamId,
      ann,
    ]);
  });

  afterAll(async () => {
    await db.close();
    await pg.drop();
  });

  it('answers each request of a batch exactly as it would be read alone: its person, cohorts, hash keys and only its own groups', async () => {
    const requests = [
      { distinctId: 'ann', groups: company('acme') },
      { distinctId: 'bob', groups: company('globex') },
      { distinctId: 'stranger', groups: company('acme') },
      { distinctId: 'ann-anon', groups: [] },
      { distinctId: 'bob', groups: company('no-such-company') },
    ];
    const together = await readStoredPersons(db, teamId, requests);
    const alone = await Promise.all(requests.map((r) => readStoredPerson(db, teamId, r.distinctId, r.groups)));
    expect(together).toEqual(alone);
    expect(together[0]).toMatchObject({ properties: { plan: 'pro' }, hashKeyOverrides: { continuity: 'ann-anon' }, groups: new Map([[0, { seats: 40 }]]) });
    expect(together[0]!.staticCohortIds.size).toBe(1);
    expect(together[1]).toMatchObject({ properties: { plan: 'free' }, groups: new Map([[0, { seats: 7 }]]) });
    expect(together[2]).toEqual({ personUuid: null, properties: {}, staticCohortIds: new Set(), hashKeyOverrides: {}, groups: new Map([[0, { seats: 40 }]]) });
    expect(together[3]!.personUuid).toBe(together[0]!.personUuid);
    expect(together[4]!.groups.size).toBe(0);
  });

  it('misses that arrive while two reads are running wait for one of them and are then read together in one statement', async () => {
    const store = observedStore(db);
    // Strangers here must be read (not proven absent by the project's list): this is about batching.
    const persons = createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 60_000, mostKnownDistinctIds: 0 });
    store.hold();
    const first = [persons.read(store.sql, teamId, 'ann', []), persons.read(store.sql, teamId, 'bob', [])];
    await nextTurn();
    // The two ids of the same tick went together; a read of the next tick runs beside it.
    expect(store.statements.map((s) => s.params[1])).toEqual([['ann', 'bob']]);
    const second = persons.read(store.sql, teamId, 'stranger-1', []);
    await nextTurn();
    expect(store.statements).toHaveLength(2);
    const waiting = ['ann-anon', 'stranger-2', 'stranger-3'].map((id) => persons.read(store.sql, teamId, id, company('acme')));
    await nextTurn();
    expect(store.statements).toHaveLength(2); // two in flight: the rest wait
    store.release();
    const answers = await Promise.all([...first, second, ...waiting]);
    expect(store.statements).toHaveLength(3);
    expect(store.statements[2]!.params[1]).toEqual(['ann-anon', 'stranger-2', 'stranger-3']);
    expect(answers.map((a) => a.properties['plan'] ?? null)).toEqual(['pro', 'free', null, 'pro', null, null]);
    expect(answers[3]!.groups.get(0)).toEqual({ seats: 40 });
  });

  it('refreshes that come due together are read in one statement, and the fresh answers replace the old', async () => {
    let clock = 1_000_000;
    const store = observedStore(db);
    const persons = createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 1000, now: () => clock, mostKnownDistinctIds: 0 });
    const ids = ['ann', 'bob', 'stranger-4'];
    for (const id of ids) await persons.read(store.sql, teamId, id, []);
    expect(store.statements).toHaveLength(3);
    await db.query(
      `UPDATE persons SET properties = properties || '{"plan":"team"}' WHERE id = (SELECT person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = 'bob')`,
      [teamId],
    );
    try {
      clock += 850; // past every answer's refresh point: each hit is answered at once and refreshed
      expect(ids.map((id) => persons.cached(teamId, id, [])?.properties['plan'] ?? null)).toEqual(['pro', 'free', null]);
      const annBefore = persons.cached(teamId, 'ann', []);
      await waitFor(async () => persons.cached(teamId, 'bob', [])?.properties['plan'] === 'team', { timeoutMs: 2000, intervalMs: 5 });
      expect(store.statements).toHaveLength(4);
      expect(store.statements[3]!.params[1]).toEqual(ids);
      // Read again unchanged: the very same answer object (decide keeps its evaluations per answer).
      expect(persons.cached(teamId, 'ann', [])).toBe(annBefore);
    } finally {
      await db.query(
        `UPDATE persons SET properties = properties || '{"plan":"free"}' WHERE id = (SELECT person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = 'bob')`,
        [teamId],
      );
    }
  });
});

describe('decide person cache: distinct ids proven to have no person', () => {
  let pg: TestPostgresDatabase;
  let db: MetadataStore;
  let teamId: number;
  const company = (key: string) => [{ index: 0, key }];
  const personReads = (store: ReturnType<typeof observedStore>) => store.statements.filter((s) => s.text.includes('flags_stored_persons'));
  const listings = (store: ReturnType<typeof observedStore>) => store.statements.filter((s) => s.text.includes('FROM person_distinct_ids'));

  beforeAll(async () => {
    pg = await createTestPostgresDatabase('decide_absent');
    db = await createMetadataStore({ url: pg.url });
    await migratePostgres(db);
    teamId = (await bootstrapInstance(db, { projectApiKey: 'phc_decide_absent_token' })).projectId;
    await insertGroupType(db, teamId, 'company', 0);
    await insertGroup(db, teamId, 0, 'acme', { seats: 40 });
    await insertPerson(db, teamId, ['ann', 'ann-anon'], { plan: 'pro' });
    await insertPerson(db, teamId, ['bob'], { plan: 'free' });
  });

  afterAll(async () => {
    await db.close();
    await pg.drop();
  });

  /** A cache that has read ann with acme once (so the project's ids are listed and acme's answer kept). */
  async function warmCache(options: { maxAgeMs?: number; now?: () => number; mostKnownDistinctIds?: number } = {}) {
    const store = observedStore(db);
    const channel = createInMemoryInvalidation<PersonChange>();
    const persons = createDecidePersonCache({ channel, maxAgeMs: options.maxAgeMs ?? 60_000, ...options });
    await persons.read(store.sql, teamId, 'ann', company('acme'));
    if (options.mostKnownDistinctIds === undefined)
      await waitFor(async () => persons.cached(teamId, 'nobody', []) !== undefined, { timeoutMs: 2000, intervalMs: 5 });
    return { store, channel, persons };
  }

  it('answers a never-seen distinct id without a store read, exactly as the store would, with the groups a kept read saw', async () => {
    const { store, persons } = await warmCache();
    const reads = personReads(store).length;
    const stranger = persons.cached(teamId, 'stranger-1', company('acme'));
    expect(stranger).toEqual(await readStoredPerson(db, teamId, 'stranger-1', company('acme')));
    expect(stranger).toEqual({ personUuid: null, properties: {}, staticCohortIds: new Set(), hashKeyOverrides: {}, groups: new Map([[0, { seats: 40 }]]) });
    expect(await persons.read(store.sql, teamId, 'stranger-2', [])).toEqual(await readStoredPerson(db, teamId, 'stranger-2', []));
    expect(personReads(store)).toHaveLength(reads);
    // Known ids, and groups no kept read has seen, still go to the store.
    expect(persons.cached(teamId, 'bob', company('acme'))).toBeUndefined();
    expect(persons.cached(teamId, 'stranger-3', company('globex'))).toBeUndefined();
    expect((await persons.read(store.sql, teamId, 'bob', company('acme'))).properties).toEqual({ plan: 'free' });
    expect(personReads(store)).toHaveLength(reads + 1);
  });

  it('reads an id the worker announced (listed before it was written) from the store, as one announced while the list loads', async () => {
    const { store, channel, persons } = await warmCache();
    const carl = await insertPerson(db, teamId, ['carl'], { plan: 'team' });
    try {
      expect(persons.cached(teamId, 'carl', [])?.personUuid).toBeNull(); // written, not yet announced: as a cached person, up to the announcement
      await channel.publish({ teamId, persons: [], distinctIds: ['carl'], groups: [] });
      expect(persons.cached(teamId, 'carl', [])).toBeUndefined();
      expect((await persons.read(store.sql, teamId, 'carl', [])).properties).toEqual({ plan: 'team' });

      // An id written after the listing's snapshot and announced before its answer arrives is added to the list.
      let answered: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (answered = resolve));
      const lateAnswers: Sql = {
        query: async <R>(text: string, params?: readonly unknown[], options?: Parameters<Sql['query']>[2]) => {
          const rows = await db.query<R>(text, params, options);
          if (text.includes('FROM person_distinct_ids')) await held;
          return rows;
        },
        exec: (script) => db.exec(script),
      };
      const fresh = createDecidePersonCache({ channel, maxAgeMs: 60_000 });
      await fresh.read(lateAnswers, teamId, 'bob', []);
      const dora = await insertPerson(db, teamId, ['dora'], {});
      await channel.publish({ teamId, persons: [], distinctIds: ['dora'], groups: [] });
      answered();
      await waitFor(async () => fresh.cached(teamId, 'stranger-4', []) !== undefined, { timeoutMs: 2000, intervalMs: 5 });
      expect(fresh.cached(teamId, 'dora', [])).toBeUndefined();
      await db.query('DELETE FROM persons WHERE id = $1', [dora]);
    } finally {
      await db.query('DELETE FROM persons WHERE id = $1', [carl]);
    }
  });

  it('stops proving absence after a whole-project change, a changed group, or past maxAgeMs, until it lists again', async () => {
    let clock = 1_000_000;
    const { store, channel, persons } = await warmCache({ maxAgeMs: 1000, now: () => clock });
    expect(persons.cached(teamId, 'stranger-5', company('acme'))).toBeDefined();
    await channel.publish({ teamId, persons: [], distinctIds: [], groups: [[0, 'acme']] });
    expect(persons.cached(teamId, 'stranger-5', company('acme'))).toBeUndefined(); // acme changed: its answer goes
    expect(persons.cached(teamId, 'stranger-5', [])).toBeDefined();
    await channel.publish({ teamId });
    expect(persons.cached(teamId, 'stranger-5', [])).toBeUndefined();
    await persons.read(store.sql, teamId, 'stranger-5', []); // lists again
    await waitFor(async () => persons.cached(teamId, 'stranger-6', []) !== undefined, { timeoutMs: 2000, intervalMs: 5 });
    clock += 1001;
    expect(persons.cached(teamId, 'stranger-6', [])).toBeUndefined();
  });

  it('stops proving absence once announced ids outgrow what it may hold, and does not list the project again at once', async () => {
    // The project has three ids (ann, ann-anon, bob): a bound of four holds them and one announced id.
    const { store, channel, persons } = await warmCache({ mostKnownDistinctIds: 4 });
    await waitFor(async () => persons.cached(teamId, 'nobody', []) !== undefined, { timeoutMs: 2000, intervalMs: 5 });
    await channel.publish({ teamId, persons: [], distinctIds: ['new-1'], groups: [] });
    expect(persons.cached(teamId, 'stranger-8', [])).toBeDefined();
    expect(persons.cached(teamId, 'new-1', [])).toBeUndefined();
    await channel.publish({ teamId, persons: [], distinctIds: ['new-2', 'new-3'], groups: [] });
    expect(persons.cached(teamId, 'stranger-8', [])).toBeUndefined();
    await persons.read(store.sql, teamId, 'stranger-8', []);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(listings(store)).toHaveLength(1); // not again within a minute
    expect(persons.cached(teamId, 'stranger-9', [])).toBeUndefined();
  });

  it('does not list a project with more distinct ids than it may hold', async () => {
    const { store, persons } = await warmCache({ mostKnownDistinctIds: 2 });
    await waitFor(async () => listings(store).length === 1, { timeoutMs: 2000, intervalMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 50)); // its answer handled
    expect(persons.cached(teamId, 'stranger-7', [])).toBeUndefined();
    await persons.read(store.sql, teamId, 'stranger-7', []);
    expect(listings(store)).toHaveLength(1); // not again within a minute
  });
});
