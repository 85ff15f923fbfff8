import { bootstrapInstance } from '@sightline/accounts';
import { createMetadataStore, migratePostgres, type MetadataStore, type Sql } from '@sightline/postgres';
import { createTestPostgresDatabase, insertFlag, waitFor, type TestPostgresDatabase } from '@sightline/testkit';
import { createFlagDefinitionsCache } from './definitions-cache';
import { createInMemoryInvalidation } from '@sightline/bus';

/** The store as the cache sees it: counts the statements and can be made to fail. */
function observedStore(db: Sql) {
  const state = { statements: 0, failing: false };
  const sql: Sql = {
    async query(text, params, options) {
      state.statements++;
      if (state.failing) throw new Error('store down');
      return db.query(text, params, options);
    },
    exec: (script) => db.exec(script),
  };
  return { sql, state };
}

describe('flag definitions cache: expiry reloads in the background', () => {
  let pg: TestPostgresDatabase;
  let db: MetadataStore;
  let teamId: number;
  const MAX_AGE_MS = 30_000;

  beforeAll(async () => {
    pg = await createTestPostgresDatabase('definitions_cache');
    db = await createMetadataStore({ url: pg.url });
    await migratePostgres(db);
    teamId = (await bootstrapInstance(db, { projectApiKey: 'phc_definitions_cache_token' })).projectId;
    await insertFlag(db, teamId, { key: 'first', filters: { groups: [{ rollout_percentage: 100 }] } });
  });

  afterAll(async () => {
    await db.close();
    await pg.drop();
  });

  const keysOf = (definitions: { flags: { key: string }[] }) => definitions.flags.map((f) => f.key).sort();

  it('past maxAgeMs, the old definitions answer at once while one reload runs; the reload then replaces them', async () => {
    let clock = 1_000_000;
    const store = observedStore(db);
    const cache = createFlagDefinitionsCache({ db: store.sql, channel: createInMemoryInvalidation(), maxAgeMs: MAX_AGE_MS, now: () => clock });
    const loaded = await cache.get(teamId);
    expect(keysOf(loaded.definitions)).toEqual(['first']);
    const afterFirstLoad = store.state.statements;

    // A change nobody announced (a row edited by hand).
    await insertFlag(db, teamId, { key: 'unannounced', filters: { groups: [{ rollout_percentage: 100 }] } });
    clock += MAX_AGE_MS - 1;
    expect((await cache.get(teamId)).definitions).toBe(loaded.definitions); // not expired: no statement
    expect(store.state.statements).toBe(afterFirstLoad);

    clock += 2;
    // Expired: the same definitions, answered without waiting; concurrent requests start one reload.
    const during = await Promise.all([cache.get(teamId), cache.get(teamId), cache.get(teamId)]);
    for (const answer of during) expect(answer).toEqual({ definitions: loaded.definitions, fresh: true });
    await waitFor(async () => keysOf((await cache.get(teamId)).definitions).includes('unannounced'), { timeoutMs: 5_000, intervalMs: 10 });
    const reloadStatements = store.state.statements - afterFirstLoad;
    // One reload's statements, however many requests saw the expired definitions.
    const oneLoad = observedStore(db);
    await createFlagDefinitionsCache({ db: oneLoad.sql, channel: createInMemoryInvalidation() }).get(teamId);
    expect(reloadStatements).toBe(oneLoad.state.statements);

    // A reload that reads the same definitions keeps the same object (decide keeps evaluations per definitions).
    const current = (await cache.get(teamId)).definitions;
    const beforeReload = store.state.statements;
    clock += MAX_AGE_MS + 1;
    await cache.get(teamId);
    await waitFor(async () => store.state.statements > beforeReload, { timeoutMs: 5_000, intervalMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the reload's answer handled
    expect((await cache.get(teamId)).definitions).toBe(current);
    await cache.close();
  });

  it('an announced change is not served stale: the next request waits for the new definitions', async () => {
    const cache = createFlagDefinitionsCache({ db, channel: createInMemoryInvalidation(), maxAgeMs: MAX_AGE_MS });
    const before = keysOf((await cache.get(teamId)).definitions);
    const key = `announced-${Date.now()}`;
    await insertFlag(db, teamId, { key, filters: { groups: [{ rollout_percentage: 100 }] } });
    await cache.notifier.flagsChanged(teamId);
    expect(keysOf((await cache.get(teamId)).definitions)).toEqual([...before, key].sort());
    await cache.close();
  });

  it('a failed reload keeps the last good definitions (marked not fresh) and is retried a second later, not per request', async () => {
    let clock = 5_000_000;
    const store = observedStore(db);
    const errors: string[] = [];
    const cache = createFlagDefinitionsCache({
      db: store.sql,
      channel: createInMemoryInvalidation(),
      maxAgeMs: MAX_AGE_MS,
      now: () => clock,
      onError: (_error, context) => errors.push(context),
    });
    const good = (await cache.get(teamId)).definitions;
    store.state.failing = true;
    clock += MAX_AGE_MS + 1;
    expect((await cache.get(teamId)).definitions).toBe(good); // answered while the reload fails
    await waitFor(async () => errors.length === 1, { timeoutMs: 5_000, intervalMs: 10 });
    const failedAt = store.state.statements;
    for (let i = 0; i < 5; i++) expect(await cache.get(teamId)).toEqual({ definitions: good, fresh: false });
    expect(store.state.statements).toBe(failedAt); // no statement per request while the store is down

    store.state.failing = false;
    clock += 1_001;
    expect((await cache.get(teamId)).definitions).toBe(good); // this request starts the retry
    await waitFor(async () => (await cache.get(teamId)).fresh, { timeoutMs: 5_000, intervalMs: 10 });
    expect((await cache.get(teamId)).definitions).toBe(good); // read again unchanged: kept
    expect(errors).toHaveLength(1);
    await cache.close();
  });
});
