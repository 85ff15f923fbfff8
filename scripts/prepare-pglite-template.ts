/**
 * `npm install` (postinstall): makes the embedded database's migrated PGlite template
 * (libs/postgres/src/pglite-template.ts) once, so the first `npm start` unpacks it instead of
 * running initdb and every migration. Never fails the install: without the template the first
 * start makes it itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMetadataStore, pgliteTemplatePath } from '@sightline/postgres';

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-template-'));
  try {
    const store = await createMetadataStore({ dataDir });
    await store.close();
    console.log(`embedded database template ready: ${pgliteTemplatePath()}`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.warn(`embedded database template not made (the first start will make it): ${String(err)}`);
});
