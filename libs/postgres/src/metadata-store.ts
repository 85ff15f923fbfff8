import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { Pool, PoolClient } from 'pg';
import { postgresEnv } from '@sightline/config';
import { copyPgliteTemplate } from './pglite-template';

/** The slice of SQL both adapters share: parameterised queries and multi-statement scripts. */
export interface QueryOptions {
  /**
   * Prepare the statement once per connection under this name (PostgreSQL skips parsing and
   * planning afterwards). For hot queries only; each name must always carry the same text.
   */
  preparedName?: string;
}

export interface Sql {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface MetadataStore extends Sql {
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * True when the store runs one statement or transaction at a time and nothing else opens its
   * data (in-process PGlite: one session, every query and transaction queued behind the one
   * running). Nothing can interleave with a transaction then, so row locks guard against nothing.
   */
  readonly oneTransactionAtATime: boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface MetadataStoreConfig {
  /** PostgreSQL connection string; when absent, in-process PGlite under dataDir. */
  url?: string;
  dataDir?: string;
  /** Most connections open at once (DATABASE_POOL_SIZE); PGlite has one. */
  poolSize?: number;
  /**
   * PGlite only: a new data directory is copied from the install's migrated template
   * (pglite-template.ts) instead of running initdb; false runs initdb (tests of migrations).
   */
  pgliteTemplate?: boolean;
}

export async function createMetadataStore(config: MetadataStoreConfig): Promise<MetadataStore> {
  if (config.url) return createPgStore(config.url, config.poolSize ?? postgresEnv.DATABASE_POOL_SIZE.default);
  if (!config.dataDir) throw new Error('metadata store: either DATABASE_URL or a data directory is required');
  return createPgliteStore(join(config.dataDir, 'postgres'), config.pgliteTemplate ?? true);
}

function pgSql(client: Pool | PoolClient): Sql {
  return {
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      const values = params as unknown[] | undefined;
      const result = options?.preparedName ? await client.query({ name: options.preparedName, text, values }) : await client.query(text, values);
      return result.rows as R[];
    },
    async exec(script: string) {
      await client.query(script);
    },
  };
}

function createPgStore(url: string, poolSize: number): MetadataStore {
  // Loaded here, not at import: the embedded mode (PGlite) never needs it, and it is start time.
  const { Pool } = require('pg') as typeof import('pg');
  const pool = new Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return {
    ...pgSql(pool),
    oneTransactionAtATime: false,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(pgSql(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      await pool.end();
    },
  };
}

async function createPgliteStore(dir: string, useTemplate: boolean): Promise<MetadataStore> {
  mkdirSync(dir, { recursive: true });
  // Loaded lazily: only the embedded mode needs the WASM build of Postgres.
  const pglite = await import('@electric-sql/pglite');
  const wrap = (db: PGlite) => wrapPglite(db, pglite);
  if (useTemplate && !existsSync(join(dir, 'PG_VERSION'))) await copyPgliteTemplate(dir, wrap);
  return wrap(await pglite.PGlite.create(dir));
}

/** A statement PGlite parsed and planned once: its parameter types and the shape of its rows. */
interface PglitePrepared {
  paramTypes: number[];
  rowDescription: BackendMessage | undefined;
}
type BackendMessage = Awaited<ReturnType<PGlite['execProtocol']>>['messages'][number];

function wrapPglite(db: PGlite, { parse, protocol }: Pick<typeof import('@electric-sql/pglite'), 'parse' | 'protocol'>): MetadataStore {
  type Tx = Pick<PGlite, 'query' | 'exec'>;
  const prepared = new Map<string, PglitePrepared>();
  const noSync = { syncToFs: false };
  const messagesOf = async (message: Uint8Array, options = noSync) => (await db.execProtocol(message, options)).messages;

  /**
   * A named statement on PGlite's one session, as pg prepares it per connection: PGlite's
   * query() parses and plans the text on every call, on the event loop's thread (WebAssembly),
   * which for decide's person read was most of its cost. Serialised with every other query and
   * transaction, as query() is, so it never runs inside someone else's transaction.
   */
  const queryPrepared = <R>(name: string, text: string, params: readonly unknown[]): Promise<R[]> =>
    db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(async () => {
        const messages: BackendMessage[] = [];
        try {
          let statement = prepared.get(name);
          if (!statement) {
            await messagesOf(protocol.serialize.parse({ name, text }));
            const described = await messagesOf(protocol.serialize.describe({ type: 'S', name }));
            statement = { paramTypes: parse.parseDescribeStatementResults(described), rowDescription: described.find((m) => m.name === 'rowDescription') };
            prepared.set(name, statement);
          }
          const { paramTypes } = statement;
          // Serialised as query() does: the type's serializer, else the value's text.
          const values = params.map((value, i) =>
            value === null || value === undefined ? null : (db.serializers[paramTypes[i]!] ?? ((v: unknown) => String(v)))(value),
          );
          if (statement.rowDescription) messages.push(statement.rowDescription);
          messages.push(...(await messagesOf(protocol.serialize.bind({ statement: name, values }))));
          messages.push(...(await messagesOf(protocol.serialize.execute({}))));
        } finally {
          // Ends the extended-protocol exchange whatever failed, and writes through as query() does.
          await messagesOf(protocol.serialize.sync(), { syncToFs: true });
        }
        return parse.parseResults(messages, db.parsers)[0]?.rows as R[];
      }),
    );

  const sql = (target: Tx, top: boolean): Sql => ({
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      // Inside a transaction, the statement runs on the transaction's own queue, unprepared.
      if (top && options?.preparedName) return queryPrepared<R>(options.preparedName, text, params ?? []);
      return (await target.query<R>(text, params as unknown[] | undefined)).rows;
    },
    async exec(script: string) {
      await target.exec(script);
    },
  });
  return {
    ...sql(db, true),
    oneTransactionAtATime: true,
    transaction: (fn) => db.transaction((tx) => fn(sql(tx, false))),
    async ping() {
      await db.query('SELECT 1');
    },
    async close() {
      await db.close();
    },
  };
}
