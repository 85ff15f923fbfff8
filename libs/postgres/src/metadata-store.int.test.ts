import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '@sightline/testkit';
import { createMetadataStore, type MetadataStore } from './metadata-store';
import { assertPostgresMigrated, loadPostgresMigrations, migratePostgres } from './migrations';

// The same behaviour from both adapters: PostgreSQL via pg, and PGlite in-process.
describe.each(['pg', 'pglite'] as const)('metadata store (%s)', (kind) => {
  let stores: MetadataStore[] = [];
  let database: TestPostgresDatabase | undefined;
  let dataDir: string | undefined;
  const open = async () => {
    const store = await createMetadataStore(kind === 'pg' ? { url: database!.url } : { dataDir: dataDir! });
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
    const racers = kind === 'pg' ? await Promise.all([open(), open(), open()]) : [await open()];
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

  it('keeps data across a reopen', async () => {
    const store = await open();
    await migratePostgres(store);
    await store.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000003', 'kept')");
    await store.close();
    stores = [];
    const again = await open();
    expect(await again.query<{ name: string }>('SELECT name FROM organizations')).toEqual([{ name: 'kept' }]);
  });

  it('reports pending migrations as not ready', async () => {
    const store = await open();
    await store.exec('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    await expect(assertPostgresMigrated(store)).rejects.toThrow(/pending/);
  });
});
