import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { createAnalyticsStore, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestClickHouseDatabase, createTestPostgresDatabase } from './databases';

/** Fresh, migrated PostgreSQL and ClickHouse databases with a bootstrapped instance (project 1). */
export interface TestStores {
  db: MetadataStore;
  ch: ClickHouseClient;
  /** Where the databases really are (the clients may go through `via`). */
  postgresUrl: string;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  /** Closes the clients and drops the databases. */
  close(): Promise<void>;
}

/**
 * Migrates `db` and bootstraps the instance in it, then opens a fresh, migrated ClickHouse
 * database beside it; `close` closes both clients and drops the ClickHouse database.
 */
async function withAnalyticsDatabase(
  db: MetadataStore,
  prefix: string,
  keys: { projectApiKey?: string; personalApiKey?: string },
  clickhouseVia?: (real: URL) => string,
) {
  await migratePostgres(db);
  await bootstrapInstance(db, keys);
  const chDb = await createTestClickHouseDatabase(prefix);
  const ch = createAnalyticsStore({ url: clickhouseVia?.(new URL(chDb.url)) ?? chDb.url, user: 'default', password: '', database: chDb.database });
  await migrateClickHouse(ch);
  return {
    db,
    ch,
    chDb,
    async close() {
      await ch.close();
      await db.close();
      await chDb.drop();
    },
  };
}

export async function createTestStores(
  prefix: string,
  keys: { projectApiKey?: string; personalApiKey?: string } = {},
  via: { postgresUrl?: (real: URL) => string; clickhouseUrl?: (real: URL) => string } = {},
): Promise<TestStores> {
  const pg = await createTestPostgresDatabase(prefix);
  const stores = await withAnalyticsDatabase(await createMetadataStore({ url: via.postgresUrl?.(new URL(pg.url)) ?? pg.url }), prefix, keys, via.clickhouseUrl);
  return {
    db: stores.db,
    ch: stores.ch,
    postgresUrl: pg.url,
    clickhouseUrl: stores.chDb.url,
    clickhouseDatabase: stores.chDb.database,
    async close() {
      await stores.close();
      await pg.drop();
    },
  };
}

/**
 * The embedded PostgreSQL (PGlite in its own thread, from the migrated template, as `npm start`
 * opens it) in a fresh temporary directory, beside a fresh ClickHouse database: for tests whose
 * cases must hold on both metadata stores.
 */
export async function createEmbeddedTestStores(
  prefix: string,
  keys: { projectApiKey?: string; personalApiKey?: string } = {},
): Promise<Pick<TestStores, 'db' | 'ch' | 'close'>> {
  const dataDir = mkdtempSync(join(tmpdir(), `sightline-${prefix}-pglite-`));
  const stores = await withAnalyticsDatabase(await createMetadataStore({ dataDir }), prefix, keys);
  return {
    db: stores.db,
    ch: stores.ch,
    async close() {
      await stores.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh PostgreSQL database beside ClickHouse as `npm start` runs it: the embedded engine
 * (chdb) in this process, over a fresh temporary directory. Its parameter binding and errors
 * are the in-process client's, not the HTTP interface's. One such engine per process at a time:
 * close it before opening another.
 */
export async function createInProcessClickHouseTestStores(
  prefix: string,
  keys: { projectApiKey?: string; personalApiKey?: string } = {},
): Promise<Pick<TestStores, 'db' | 'ch' | 'close'>> {
  const pg = await createTestPostgresDatabase(prefix);
  const db = await createMetadataStore({ url: pg.url });
  await migratePostgres(db);
  await bootstrapInstance(db, keys);
  const dataDir = mkdtempSync(join(tmpdir(), `sightline-${prefix}-chdb-`));
  const ch = createAnalyticsStore({ user: 'default', password: '', database: 'default', dataDir });
  await migrateClickHouse(ch);
  return {
    db,
    ch,
    async close() {
      await ch.close();
      await db.close();
      await pg.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
