import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { etagOf } from '@sightline/http';

export interface SdkFile {
  body: Buffer;
  etag: string;
  contentType: string;
}

export interface SdkFiles {
  /** The posthog-js version installed (package.json pins it); versioned paths must name it. */
  version: string;
  /** A file of the package's dist/ by its bare name, or null: only names listed there exist. */
  get(name: string): SdkFile | null;
}

/** Script bundles and their source maps; type declarations and the rest stay private. */
const SERVED = /^[A-Za-z0-9][A-Za-z0-9._-]*\.(js|js\.map)$/;

/**
 * The browser SDK's built files, straight from the installed `posthog-js` package (never copied
 * into the repository). Names are listed once; a file is read and hashed on first use and kept,
 * as the package does not change while the process runs. A requested name is only ever looked up
 * in that list, so no path reaches the file system.
 */
export function openPosthogJsFiles(packageJsonPath = require.resolve('posthog-js/package.json')): SdkFiles {
  const root = dirname(packageJsonPath);
  const version = (JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { version: string }).version;
  const dist = join(root, 'dist');
  const names = new Set(readdirSync(dist).filter((name) => SERVED.test(name)));
  const loaded = new Map<string, SdkFile>();
  return {
    version,
    get(name) {
      if (!names.has(name)) return null;
      let file = loaded.get(name);
      if (!file) {
        const body = readFileSync(join(dist, name));
        file = { body, etag: etagOf(body), contentType: name.endsWith('.map') ? 'application/json; charset=utf-8' : 'application/javascript; charset=utf-8' };
        loaded.set(name, file);
      }
      return file;
    },
  };
}
