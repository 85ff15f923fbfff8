import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { copyFile, readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { loadPostgresMigrations, migratePostgres, POSTGRES_MIGRATIONS_DIR } from './migrations';
import type { MetadataStore } from './store-interfaces';

/**
 * A fresh embedded database costs a PGlite initdb (3–6 s of WebAssembly) plus every migration.
 * Both give the same bytes for a given PGlite build and migration set, so they run once per
 * install: the result is kept as a closed PGlite data directory under node_modules/.cache, and
 * a new data directory is a file copy of it (far cheaper than unpacking a tarball into PGlite's
 * emulated file system). The directory name carries the PGlite
 * version and a hash of the migration files, so a new PGlite or a new migration makes a new
 * template; migrations still run after opening, and find nothing to do.
 */
export function pgliteTemplatePath(migrationsDir = POSTGRES_MIGRATIONS_DIR): string {
  const pgliteEntry = require.resolve('@electric-sql/pglite');
  // dist/index.cjs -> the package folder (its package.json is not exported, so read it by path).
  const pgliteDir = dirname(dirname(pgliteEntry));
  const version = (JSON.parse(readFileSync(join(pgliteDir, 'package.json'), 'utf8')) as { version: string }).version;
  const hash = createHash('sha256');
  for (const migration of loadPostgresMigrations(migrationsDir)) hash.update(`${migration.name}\n${migration.sql}\n`);
  const nodeModules = dirname(dirname(pgliteDir));
  return join(nodeModules, '.cache', 'sightline', `pglite-${version}-${hash.digest('hex').slice(0, 16)}`);
}

/**
 * Makes `dir` (absent or empty) a copy of the template for the current PGlite and migrations,
 * making the template first when missing. Copied aside and renamed into place, so a start
 * interrupted while copying leaves no half database behind.
 */
export async function copyPgliteTemplate(dir: string, wrap: (db: PGlite) => MetadataStore, migrationsDir = POSTGRES_MIGRATIONS_DIR): Promise<void> {
  const template = pgliteTemplatePath(migrationsDir);
  if (!existsSync(join(template, 'PG_VERSION'))) await makeTemplate(template, wrap, migrationsDir);
  const partial = `${dir}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await copyDirectory(template, partial);
  if (existsSync(dir)) rmdirSync(dir);
  renameSync(partial, dir);
}

/**
 * Copies a directory tree with the files copied side by side on libuv's thread pool: about a
 * thousand small files, which a synchronous copy would copy one by one on the main thread
 * while the analytics store's first start waits for it.
 */
async function copyDirectory(from: string, to: string): Promise<void> {
  const files: string[] = [];
  mkdirSync(to, { mode: 0o700 });
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    const path = relative(from, join(entry.parentPath, entry.name));
    if (entry.isDirectory()) mkdirSync(join(to, path), { recursive: true, mode: 0o700 });
    else files.push(path);
  }
  await Promise.all(files.map((path) => copyFile(join(from, path), join(to, path))));
}

async function makeTemplate(template: string, wrap: (db: PGlite) => MetadataStore, migrationsDir: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  // Made aside and renamed: processes making it at the same time never copy half a directory.
  const partial = `${template}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const db = await PGlite.create(partial);
  try {
    await migratePostgres(wrap(db), migrationsDir);
  } finally {
    await db.close();
  }
  try {
    renameSync(partial, template);
  } catch (err) {
    // Another process placed the same template first.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(template, 'PG_VERSION'))) throw err;
  }
}
