/** Shared setup of the flag-management integration tests (real PostgreSQL and ClickHouse). */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapInstance, insertPersonalKey, type PrincipalChanges, type ProjectChanges, type ProjectTokenChanges } from '@sightline/accounts';
import { hashPersonalApiKey, maskPersonalApiKey } from '@sightline/auth';
import { createAnalyticsStore, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache } from '@sightline/flag-store';
import { silentLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import type { JobOperator } from '@sightline/jobs';
import type { DecidePersonCache } from '@sightline/persons';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createInProcessClickHouseTestStores, createTestClickHouseDatabase, createTestStores, type TestClickHouseDatabase } from '@sightline/testkit';
import { listen } from '@sightline/http';
import { createApiApp, type AccessOptions, type ApiDeps } from '../app';

export const ADMIN_KEY = 'phx_flags_admin';

export interface FlagFixture {
  db: MetadataStore;
  ch: ClickHouseClient;
  app: ReturnType<typeof createApiApp>;
  /** Team ids passed to flagsChanged, in call order. */
  flagChanges: number[];
  adminUserId: number;
  organizationId: string;
  /** Adds a key (for the admin user unless a user is given) with these scopes. */
  addKey(key: string, scopes: string[], userId?: number): Promise<void>;
  /** Adds a user of the same organisation. */
  addUser(email: string): Promise<{ id: number; uuid: string }>;
  /**
   * The app's project-change channel: a test that changes a project behind the API (raw SQL, to
   * store what the API refuses, as data stored before a check) announces it here, as a process
   * started over that data would read it; otherwise the app's project cache serves the row it
   * read for up to PROJECT_CACHE_MAX_AGE_MS.
   */
  projectChanges: ProjectChanges;
  close(): Promise<void>;
}

/**
 * `pglite`: the embedded mode's in-process PostgreSQL instead of the shared server; `chdb`: the
 * embedded mode's in-process ClickHouse engine instead of the HTTP interface.
 */
export async function createFlagFixture(
  name: string,
  now: () => number,
  store: 'pg' | 'pglite' | 'chdb' = 'pg',
  options: {
    access?: AccessOptions;
    metrics?: Metrics;
    decidePersons?: DecidePersonCache;
    jobs?: JobOperator;
    projectTokenChanges?: ProjectTokenChanges;
    principalChanges?: PrincipalChanges;
    principalCacheMaxAgeMs?: number;
    projectChanges?: ProjectChanges;
    projectCacheMaxAgeMs?: number;
    analytics?: ApiDeps['analytics'];
  } = {},
): Promise<FlagFixture> {
  let stores: { db: MetadataStore; ch: ClickHouseClient; close(): Promise<void> };
  if (store === 'pg') stores = await createTestStores(name, { personalApiKey: ADMIN_KEY });
  else if (store === 'chdb') stores = await createInProcessClickHouseTestStores(name, { personalApiKey: ADMIN_KEY });
  else {
    // The embedded mode's PGlite beside a test ClickHouse database.
    const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
    const chDb: TestClickHouseDatabase = await createTestClickHouseDatabase(name);
    const db = await createMetadataStore({ dataDir });
    await migratePostgres(db);
    await bootstrapInstance(db, { personalApiKey: ADMIN_KEY });
    const ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(ch);
    stores = {
      db,
      ch,
      close: async () => {
        await ch.close();
        await db.close();
        await chDb.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const { db, ch } = stores;
  const [admin] = await db.query<{ id: number; organization_id: string }>('SELECT id, organization_id FROM users ORDER BY id LIMIT 1');
  const flagChanges: number[] = [];
  // The app's own definitions cache, told of every change as in production, so decide sees writes.
  const flagDefinitions = createFlagDefinitionsCache({ db, channel: createInMemoryInvalidation() });
  const projectChanges = options.projectChanges ?? createInMemoryInvalidation<number>();
  const app = createApiApp({
    flagDefinitions,
    db,
    ch,
    logger: silentLogger(),
    metrics: options.metrics ?? createMetrics(),
    now,
    access: options.access,
    decidePersons: options.decidePersons,
    jobs: options.jobs,
    projectTokenChanges: options.projectTokenChanges,
    principalChanges: options.principalChanges,
    principalCacheMaxAgeMs: options.principalCacheMaxAgeMs,
    projectChanges,
    projectCacheMaxAgeMs: options.projectCacheMaxAgeMs,
    analytics: options.analytics,
    readiness: [],
    isShuttingDown: () => false,
    flagChanges: {
      flagsChanged: async (teamId) => {
        flagChanges.push(teamId);
        await flagDefinitions.notifier.flagsChanged(teamId);
      },
    },
  });
  return {
    db,
    ch,
    app,
    flagChanges,
    projectChanges,
    adminUserId: admin!.id,
    organizationId: admin!.organization_id,
    async addKey(key, scopes, userId = admin!.id) {
      await insertPersonalKey(db, { userId, label: key, secureValue: hashPersonalApiKey(key), maskValue: maskPersonalApiKey(key), scopes });
    },
    async addUser(email) {
      const uuid = randomUUID();
      const [user] = await db.query<{ id: number }>(
        'INSERT INTO users (uuid, distinct_id, organization_id, first_name, email) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        [uuid, randomUUID(), admin!.organization_id, email.split('@')[0], email],
      );
      return { id: user!.id, uuid };
    },
    close: () => stores.close(),
  };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

export interface ServedFixture {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** A request with the admin key; the body as given (text) or JSON-encoded. */
  send(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * The fixture's app on the server every Sightline app runs on (`listen`: timeouts, JSON answers to
 * refused requests), not app.listen, for tests that need real sockets.
 */
export async function serveFixture(fixture: FlagFixture): Promise<ServedFixture> {
  const server = await listen(fixture.app, { host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    base,
    async send(method, path, body) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { ...bearer(ADMIN_KEY), 'Content-Type': 'application/json' },
        body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      let json: Record<string, unknown> = {};
      try {
        json = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      } catch {
        // Not JSON: the caller's assertion shows `text`.
      }
      return { status: response.status, text, json };
    },
    close: () => server.close(),
  };
}
