import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { loadPostgresMigrations, migratePostgres, POSTGRES_MIGRATIONS_DIR } from './migrations';
import type { MetadataStore } from './metadata-store';

/**
 * A fresh embedded database costs a PGlite initdb (3–6 s of WebAssembly) plus every migration.
 * Both give the same bytes for a given PGlite build and migration set, so they run once per
 * install: the result is kept as a tarball under node_modules/.cache and a new data directory
 * is unpacked from it (about 1 s). The file name carries the PGlite version and a hash of the
 * migration files, so a new PGlite or a new migration makes a new template; migrations still
 * run after opening, and find nothing to do.
 */
export function pgliteTemplatePath(migrationsDir = POSTGRES_MIGRATIONS_DIR): string {
  const pgliteEntry = require.resolve('@electric-sql/pglite');
  // dist/index.cjs -> the package folder (its package.json is not exported, so read it by path).
  const pgliteDir = dirname(dirname(pgliteEntry));
  const version = (JSON.parse(readFileSync(join(pgliteDir, 'package.json'), 'utf8')) as { version: string }).version;
  const hash = createHash('sha256');
  for (const migration of loadPostgresMigrations(migrationsDir)) hash.update(`${migration.name}\n${migration.sql}\n`);
  const nodeModules = dirname(dirname(pgliteDir));
  return join(nodeModules, '.cache', 'sightline', `pglite-${version}-${hash.digest('hex').slice(0, 16)}.tar`);
}

/** The template for the current PGlite and migrations, made (and kept) when missing. */
export async function loadPgliteTemplate(wrap: (db: PGlite) => MetadataStore, migrationsDir = POSTGRES_MIGRATIONS_DIR): Promise<Blob> {
  const path = pgliteTemplatePath(migrationsDir);
  if (existsSync(path)) return new Blob([readFileSync(path)]);
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create();
  try {
    await migratePostgres(wrap(db), migrationsDir);
    const tarball = await db.dumpDataDir('none');
    mkdirSync(dirname(path), { recursive: true });
    // Written aside then renamed: processes making it at the same time never read half a file.
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await tarball.arrayBuffer()));
    renameSync(partial, path);
    return tarball;
  } finally {
    await db.close();
  }
}
