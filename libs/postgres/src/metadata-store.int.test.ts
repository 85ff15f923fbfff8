import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestPostgresDatabase, waitFor, type TestPostgresDatabase } from '@sightline/testkit';
import { createMetadataStore } from './metadata-store';
import type { MetadataStore } from './store-interfaces';
import { assertPostgresMigrated, loadPostgresMigrations, migratePostgres } from './migrations';
import { pgliteTemplatePath } from './pglite-template';

// The same behaviour from both adapters: PostgreSQL via pg, and PGlite in-process (in its own
// thread, the default, and on the calling thread).
describe.each(['pg', 'pglite', 'pglite-this-thread'] as const)('metadata store (%s)', (kind) => {
  let stores: MetadataStore[] = [];
  let database: TestPostgresDatabase | undefined;
  let dataDir: string | undefined;
  /**
   * A store on this test's database. A new PGlite directory starts from the install's migrated
   * template, as `npm start`'s does, unless the test needs an empty database (`empty`): an empty
   * one costs an initdb, seconds per test.
   */
  const open = async (pglite: 'template' | 'empty' = 'template') => {
    const store = await createMetadataStore(
      kind === 'pg' ? { url: database!.url } : { dataDir: dataDir!, pgliteTemplate: pglite === 'template', pgliteThread: kind === 'pglite' },
    );
    stores.push(store);
    return store;
  };

  beforeEach(async () => {
    if (kind === 'pg') database = await createTestPostgresDatabase('metadata');
    else dataDir = mkdtempSync(join(tmpdir(), 'sightline-pglite-'));
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('applies every migration once, even when several processes migrate at the same time', async () => {
    const all = loadPostgresMigrations().map((m) => m.version);
    // Separate pools race like separate processes (PGlite is single-connection by nature).
    const racers = kind === 'pg' ? await Promise.all([open(), open(), open()]) : [await open('empty')];
    const results = await Promise.all(racers.map((s) => migratePostgres(s)));
    expect(results.flat().sort((a, b) => a - b)).toEqual(all);
    expect(await migratePostgres(racers[0]!)).toEqual([]);
    await expect(assertPostgresMigrated(racers[0]!)).resolves.toBeUndefined();
  });

  it('rolls back a failed transaction and commits a good one', async () => {
    const store = await open();
    await migratePostgres(store);
    await expect(
      store.transaction(async (tx) => {
        await tx.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'a')");
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.query('SELECT * FROM organizations')).toEqual([]);
    await store.transaction((tx) => tx.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000002', 'b')"));
    expect(await store.query<{ name: string }>('SELECT name FROM organizations')).toEqual([{ name: 'b' }]);
  });

  it('reports a failed statement with its PostgreSQL fields, in and out of a transaction', async () => {
    const store = await open();
    await store.exec('CREATE TABLE error_probe (id int PRIMARY KEY, at timestamptz, raw bytea)');
    await store.query('INSERT INTO error_probe VALUES ($1, $2, $3)', [1, new Date('2024-01-02T03:04:05.678Z'), Buffer.from([1, 2, 3])]);
    const [row] = await store.query<{ at: Date; raw: Uint8Array }>('SELECT at, raw FROM error_probe');
    expect(row!.at).toEqual(new Date('2024-01-02T03:04:05.678Z'));
    expect([...row!.raw]).toEqual([1, 2, 3]);
    const duplicate = await store.query('INSERT INTO error_probe (id) VALUES (1)').catch((error: unknown) => error);
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate).toMatchObject({ code: '23505', constraint: 'error_probe_pkey', message: expect.stringMatching(/duplicate key/) });
    const inTransaction = await store.transaction((tx) => tx.query('INSERT INTO error_probe (id) VALUES (1)')).catch((error: unknown) => error);
    expect(inTransaction).toMatchObject({ code: '23505', constraint: 'error_probe_pkey' });
    // The store is usable afterwards.
    expect(await store.query('SELECT count(*)::int AS n FROM error_probe')).toEqual([{ n: 1 }]);
  });

  it('keeps data across a reopen', async () => {
    const store = await open();
    await migratePostgres(store);
    await store.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000003', 'kept')");
    await store.close();
    stores = [];
    const again = await open();
    expect(await again.query<{ name: string }>('SELECT name FROM organizations')).toEqual([{ name: 'kept' }]);
  });

  it('answers a prepared statement as the unprepared one, for any parameters, after a failure and outside an open transaction', async () => {
    const store = await open();
    await store.exec('CREATE TABLE prepared_probe (id int PRIMARY KEY, doc jsonb NOT NULL, tags text[] NOT NULL)');
    await store.query(`INSERT INTO prepared_probe VALUES (1, '{"a":1}', '{x,y}'), (2, '{"b":[2]}', '{}')`);
    const text = 'SELECT id, doc, tags, $2::int[] AS echoed FROM prepared_probe WHERE id = ANY($1::int[]) AND 1 / $3::int > 0 ORDER BY id';
    const prepared = (ids: number[], divisor: number) => store.query(text, [ids, [7, 8], divisor], { preparedName: 'probe_v1' });
    for (const ids of [[1], [2], [1, 2], []]) expect(await prepared(ids, 1)).toEqual(await store.query(text, [ids, [7, 8], 1]));
    expect(await prepared([1], 1)).toEqual([{ id: 1, doc: { a: 1 }, tags: ['x', 'y'], echoed: [7, 8] }]);
    await expect(prepared([1], 0)).rejects.toThrow(/division by zero/);
    expect(await prepared([2], 1)).toEqual([{ id: 2, doc: { b: [2] }, tags: [], echoed: [7, 8] }]);
    // A prepared read issued while a transaction is open sees only what was committed.
    let inserted!: () => void;
    const insertedRow = new Promise<void>((resolve) => (inserted = resolve));
    let readSent!: () => void;
    const sent = new Promise<void>((resolve) => (readSent = resolve));
    let readAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (readAnswered = resolve));
    const transaction = store.transaction(async (tx) => {
      await tx.query(`INSERT INTO prepared_probe VALUES (3, '{}', '{}')`);
      inserted();
      // PostgreSQL answers the read on another connection while this transaction is open; PGlite
      // runs one statement or transaction at a time, so there the read is queued behind this one.
      if (kind === 'pg') await answered;
      else await sent.then(() => new Promise((resolve) => setImmediate(resolve)));
      throw new Error('rolled back');
    });
    await insertedRow;
    const read = prepared([3], 1).finally(readAnswered);
    readSent();
    expect(await read).toEqual([]);
    await expect(transaction).rejects.toThrow('rolled back');
    expect(await prepared([3], 1)).toEqual([]);
  });

  it('reports pending migrations as not ready', async () => {
    const store = await open('empty');
    await store.exec('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    await expect(assertPostgresMigrated(store)).rejects.toThrow(/pending/);
  });
});

describe('PGlite data directory from the migrated template', () => {
  const dirs: string[] = [];
  const stores: MetadataStore[] = [];
  const open = async (pgliteTemplate: boolean, dataDir = mkdtempSync(join(tmpdir(), 'sightline-pglite-'))) => {
    dirs.push(dataDir);
    const store = await createMetadataStore({ dataDir, pgliteTemplate });
    stores.push(store);
    return store;
  };
  // Everything a migration can create, as text: tables, columns with types and defaults, indexes, constraints.
  const schema = async (store: MetadataStore) => ({
    columns: await store.query(
      `SELECT table_name, column_name, data_type, column_default, is_nullable FROM information_schema.columns
        WHERE table_schema = 'public' ORDER BY table_name, column_name`,
    ),
    indexes: await store.query(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`),
    constraints: await store.query(
      `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY conname`,
    ),
    migrations: await store.query('SELECT version, name FROM schema_migrations ORDER BY version'),
  });

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('gives the same schema as migrating an empty database, with nothing left to migrate', async () => {
    const fromTemplate = await open(true);
    expect(existsSync(pgliteTemplatePath())).toBe(true);
    expect(await migratePostgres(fromTemplate)).toEqual([]);
    const migrated = await open(false);
    expect((await migratePostgres(migrated)).length).toBe(loadPostgresMigrations().length);
    const expected = await schema(migrated);
    expect(expected.migrations).toHaveLength(loadPostgresMigrations().length);
    expect(await schema(fromTemplate)).toEqual(expected);
  });

  it('gives each new directory its own copy: what one writes is not in the template nor in the next', async () => {
    const first = await open(true);
    await first.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000005', 'first only')");
    const second = await open(true);
    expect(await second.query('SELECT name FROM organizations')).toEqual([]);
    // Copied aside and renamed into place: nothing else is left in a data directory.
    for (const dir of dirs) expect(readdirSync(dir)).toEqual(['postgres']);
  });

  it('is only used for a new directory: a reopened one keeps its data', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sightline-pglite-'));
    const store = await open(true, dataDir);
    await store.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000004', 'kept')");
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    const again = await open(true, dataDir);
    expect(await again.query<{ name: string }>('SELECT name FROM organizations')).toEqual([{ name: 'kept' }]);
  });
});

// PostgreSQL restarting (or an administrator ending the session) while a transaction waits
// between two statements: pg then emits 'error' on the checked-out client, which crashed the
// whole process when nothing listened (a worker died on a PostgreSQL restart in the cluster
// fault test). The transaction must fail like any other, and the store keep working.
describe('metadata store (pg) when the server ends a connection inside a transaction', () => {
  let database: TestPostgresDatabase;
  let store: MetadataStore;
  beforeAll(async () => {
    database = await createTestPostgresDatabase('metadata_terminated');
    store = await createMetadataStore({ url: database.url });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('fails the transaction, keeps the process up, and answers the next query on a new connection', async () => {
    const admin = await createMetadataStore({ url: database.url, poolSize: 1 });
    try {
      const outcome = store.transaction(async (tx) => {
        const [{ pid }] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        // Idle in the transaction until the backend is gone: its FATAL arrives as an event, not as an answer.
        await waitFor(async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).length === 0, {
          timeoutMs: 10_000,
          intervalMs: 20,
          description: 'the terminated backend gone',
        });
        await tx.query('SELECT 1');
      });
      await expect(outcome).rejects.toThrow();
      expect(await store.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(await store.transaction((tx) => tx.query<{ two: number }>('SELECT 2 AS two'))).toEqual([{ two: 2 }]);
    } finally {
      await admin.close();
    }
  });
});
