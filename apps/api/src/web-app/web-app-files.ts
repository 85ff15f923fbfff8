import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { etagOf } from '@sightline/http';

export interface WebAppFile {
  body: Buffer;
  etag: string;
  contentType: string;
}

export interface WebAppFiles {
  /** The app's page, or null when the app was not built (no dist/ folder). */
  index: WebAppFile | null;
  /** A hashed file under assets/ by its bare name, or null: only names listed there exist. */
  asset(name: string): WebAppFile | null;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
};

function fileAt(path: string): WebAppFile {
  const body = readFileSync(path);
  return { body, etag: etagOf(body), contentType: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream' };
}

/**
 * The built web app (apps/web/dist, written by `npm ci`'s prepare script). Files are read once at
 * start: a build replaces them with new hashed names, which a restart picks up. A requested name is
 * only looked up in the listing, so no path reaches the file system.
 */
export function openWebAppFiles(distDir: string): WebAppFiles {
  const indexPath = join(distDir, 'index.html');
  if (!existsSync(indexPath)) return { index: null, asset: () => null };
  const index = { ...fileAt(indexPath), contentType: 'text/html; charset=utf-8' };
  const assetsDir = join(distDir, 'assets');
  const assets = new Map<string, WebAppFile>();
  if (existsSync(assetsDir)) for (const name of readdirSync(assetsDir)) assets.set(name, fileAt(join(assetsDir, name)));
  return { index, asset: (name) => assets.get(name) ?? null };
}
