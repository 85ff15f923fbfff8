/** Fresh, uniquely named databases per test on the shared PostgreSQL and ClickHouse. */
import { Client } from 'pg';
import { uniqueName } from './names';
import { readServicesFile } from './service-info';

/** A database name valid unquoted in PostgreSQL and ClickHouse (63 chars max). */
function databaseName(prefix: string): string {
  const name = uniqueName(prefix)
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_');
  const safe = /^[a-z_]/.test(name) ? name : `db_${name}`;
  // Keep the unique suffix when the prefix is long.
  return safe.length <= 63 ? safe : safe.slice(0, 40) + safe.slice(-23);
}

export interface TestPostgresDatabase {
  /** Connection URL of the new database, as superuser `postgres`. */
  url: string;
  database: string;
  /** Drops it, disconnecting any client still connected. */
  drop(): Promise<void>;
}

async function withAdminClient<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: readServicesFile().postgresAdminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty PostgreSQL database named after `prefix`. */
export async function createTestPostgresDatabase(prefix: string): Promise<TestPostgresDatabase> {
  const database = databaseName(prefix);
  await withAdminClient((client) => client.query(`CREATE DATABASE "${database}"`));
  const url = new URL(readServicesFile().postgresAdminUrl);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    database,
    drop: async () => {
      await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    },
  };
}

export interface TestClickHouseDatabase {
  /** Base URL of the ClickHouse HTTP front: pass it with `database` to `createClient`. */
  url: string;
  database: string;
  drop(): Promise<void>;
}

/** Runs one statement on the ClickHouse HTTP front, throwing its error text on failure. */
async function clickhouseCommand(sql: string): Promise<void> {
  const response = await fetch(readServicesFile().clickhouseUrl, { method: 'POST', body: sql });
  const body = await response.text();
  if (!response.ok) throw new Error(`ClickHouse: ${sql}: ${body.trim()}`);
}

/** Creates an empty ClickHouse database (on the chdb front) named after `prefix`. */
export async function createTestClickHouseDatabase(prefix: string): Promise<TestClickHouseDatabase> {
  const database = databaseName(prefix);
  await clickhouseCommand(`CREATE DATABASE ${database}`);
  return {
    url: readServicesFile().clickhouseUrl,
    database,
    drop: () => clickhouseCommand(`DROP DATABASE IF EXISTS ${database} SYNC`),
  };
}
