import { join } from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { postgresEnv } from '@sightline/config';
import { openPgliteSession } from './pglite-session';
import { createPgliteThreadStore } from './pglite-thread';
import type { MetadataStore, QueryOptions, Sql } from './store-interfaces';

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
  /**
   * PGlite only: run it in a worker thread of its own (default), so its WebAssembly never
   * blocks this thread's event loop; false runs it on this thread.
   */
  pgliteThread?: boolean;
  /**
   * Called once if the store is lost for good while open (the embedded PGlite thread died):
   * every later statement would fail, so the process should end and be restarted.
   */
  onLost?: (error: Error) => void;
}

export async function createMetadataStore(config: MetadataStoreConfig): Promise<MetadataStore> {
  if (config.url) return createPgStore(config.url, config.poolSize ?? postgresEnv.DATABASE_POOL_SIZE.default);
  if (!config.dataDir) throw new Error('metadata store: either DATABASE_URL or a data directory is required');
  const dir = join(config.dataDir, 'postgres');
  const useTemplate = config.pgliteTemplate ?? true;
  return (config.pgliteThread ?? true) ? createPgliteThreadStore(dir, useTemplate, { onLost: config.onLost }) : openPgliteSession(dir, useTemplate);
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
      // The server can end the connection while the transaction waits between two statements
      // (a restart, an administrator): pg then emits 'error' on this checked-out client, which
      // the pool no longer listens to, and an unheard 'error' ends the process. The next
      // statement fails anyway; the broken connection is then dropped, not pooled again.
      let broken: Error | undefined;
      const onError = (error: Error) => {
        broken ??= error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn(pgSql(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken ??= rollbackError;
        });
        throw error;
      } finally {
        // A dropped connection may still report its end: heard, and ignored.
        if (!broken) client.off('error', onError);
        client.release(broken);
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
