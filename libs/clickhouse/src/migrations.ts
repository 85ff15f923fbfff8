import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { clusterStatements } from './cluster/cluster-statements';
import { SINGLE_SERVER, type ClickHouseLayout } from './cluster/layout';

export const CLICKHOUSE_MIGRATIONS_DIR = join(__dirname, '..', 'migrations');

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

/** Reads `NNNN_name.sql` files in order; statements are separated by `;` at a line end. */
export function loadMigrations(dir = CLICKHOUSE_MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.replace(/\.sql$/, ''),
      statements: splitStatements(readFileSync(join(dir, file), 'utf8')),
    }));
}

export function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const SCHEMA_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime DEFAULT now())
            ENGINE = ReplacingMergeTree ORDER BY version`;

/** Every statement a migration runs in `layout`: as written on one server, rewritten for a cluster. */
export function migrationStatements(migration: Migration, layout: ClickHouseLayout = SINGLE_SERVER): string[] {
  return migration.statements.flatMap((statement) => clusterStatements(statement, layout));
}

/** The statement creating the table of applied migrations in `layout` (on a cluster: on every node). */
export const schemaMigrationsStatements = (layout: ClickHouseLayout = SINGLE_SERVER): string[] => clusterStatements(SCHEMA_MIGRATIONS_TABLE, layout);

/**
 * Applies pending migrations and records them in `schema_migrations`.
 * ClickHouse has no transactions or locks, so every statement must be idempotent
 * (`IF NOT EXISTS`, enforced by a unit test): two processes starting together may both
 * apply a migration, and the result is the same. In cluster mode every statement runs ON CLUSTER
 * (cluster/cluster-statements.ts) and `schema_migrations` is replicated to every node, so a
 * process connected to any node sees what was applied.
 */
export async function migrateClickHouse(client: ClickHouseClient, options: { dir?: string; layout?: ClickHouseLayout } = {}): Promise<number[]> {
  const { dir = CLICKHOUSE_MIGRATIONS_DIR, layout = SINGLE_SERVER } = options;
  for (const statement of schemaMigrationsStatements(layout)) await client.command({ query: statement });
  const applied = new Set(
    (await (await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' })).json<{ version: number }>()).map((r) =>
      Number(r.version),
    ),
  );
  const done: number[] = [];
  for (const migration of loadMigrations(dir)) {
    if (applied.has(migration.version)) continue;
    for (const statement of migrationStatements(migration, layout)) await client.command({ query: statement });
    await client.insert({ table: 'schema_migrations', values: [{ version: migration.version, name: migration.name }], format: 'JSONEachRow' });
    done.push(migration.version);
  }
  return done;
}

/** Readiness: every migration file is recorded as applied. */
export async function assertClickHouseMigrated(client: ClickHouseClient, dir = CLICKHOUSE_MIGRATIONS_DIR): Promise<void> {
  const rows = await (await client.query({ query: 'SELECT max(version) AS v FROM schema_migrations', format: 'JSONEachRow' })).json<{ v: number }>();
  const latest = Math.max(0, ...loadMigrations(dir).map((m) => m.version));
  if (Number(rows[0]?.v ?? 0) < latest) throw new Error(`clickhouse migrations pending (at ${rows[0]?.v ?? 0}, need ${latest})`);
}
