import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetadataStore } from './store-interfaces';

export const POSTGRES_MIGRATIONS_DIR = join(__dirname, '..', 'migrations');

// Arbitrary constant identifying "Sightline schema migrations" among advisory locks.
const MIGRATION_LOCK_KEY = 7_344_615_001;

interface MigrationFile {
  version: number;
  name: string;
  sql: string;
}

export function loadPostgresMigrations(dir = POSTGRES_MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 4)), name: file.replace(/\.sql$/, ''), sql: readFileSync(join(dir, file), 'utf8') }));
}

/**
 * Applies pending migrations in one transaction under an advisory lock, so several
 * processes starting at once apply each migration exactly once; the others wait, then
 * find nothing to do.
 */
export async function migratePostgres(db: MetadataStore, dir = POSTGRES_MIGRATIONS_DIR): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
    const done: number[] = [];
    for (const migration of loadPostgresMigrations(dir)) {
      if (applied.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      done.push(migration.version);
    }
    return done;
  });
}

export async function assertPostgresMigrated(db: MetadataStore, dir = POSTGRES_MIGRATIONS_DIR): Promise<void> {
  const rows = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  const latest = Math.max(0, ...loadPostgresMigrations(dir).map((m) => m.version));
  const at = Number(rows[0]?.v ?? 0);
  if (at < latest) throw new Error(`postgres migrations pending (at ${at}, need ${latest})`);
}
