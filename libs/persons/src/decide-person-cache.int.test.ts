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
    const persons = createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 60_000 });
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
    const persons = createDecidePersonCache({ channel: createInMemoryInvalidation<PersonChange>(), maxAgeMs: 1000, now: () => clock });
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
      await waitFor(async () => persons.cached(teamId, 'bob', [])?.properties['plan'] === 'team', { timeoutMs: 2000, intervalMs: 5 });
      expect(store.statements).toHaveLength(4);
      expect(store.statements[3]!.params[1]).toEqual(ids);
    } finally {
      await db.query(
        `UPDATE persons SET properties = properties || '{"plan":"free"}' WHERE id = (SELECT person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = 'bob')`,
        [teamId],
      );
    }
  });
});
