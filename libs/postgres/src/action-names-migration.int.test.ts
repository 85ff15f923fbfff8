import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '@sightline/testkit';
import { createMetadataStore } from './metadata-store';
import type { MetadataStore } from './store-interfaces';
import { migratePostgres, POSTGRES_MIGRATIONS_DIR } from './migrations';

/** Migration 0100: the live-name index on actions, built over a database that already has duplicates. */
describe('migration 0100 (unique live action names)', () => {
  let database: TestPostgresDatabase;
  let store: MetadataStore;
  let before: string;
  beforeAll(async () => {
    database = await createTestPostgresDatabase('action_names');
    store = await createMetadataStore({ url: database.url });
    // Every migration before 0100, as a database that has not taken it yet.
    before = mkdtempSync(join(tmpdir(), 'sightline-migrations-'));
    for (const file of readdirSync(POSTGRES_MIGRATIONS_DIR).filter((f) => /^\d{4}_/.test(f) && Number(f.slice(0, 4)) < 100)) {
      symlinkSync(join(POSTGRES_MIGRATIONS_DIR, file), join(before, file));
    }
    await migratePostgres(store, before);
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
    rmSync(before, { recursive: true, force: true });
  });

  it('keeps the oldest live name, renames later live duplicates, leaves deleted ones, then refuses new duplicates', async () => {
    await store.exec(`
      INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Org');
      INSERT INTO projects (id, uuid, organization_id, name, api_token)
        VALUES (501, '00000000-0000-0000-0000-0000000000b1', '00000000-0000-0000-0000-0000000000a1', 'One', 'phc_names_one'),
               (502, '00000000-0000-0000-0000-0000000000b2', '00000000-0000-0000-0000-0000000000a1', 'Two', 'phc_names_two');`);
    const insert = async (team: number, name: string, deleted = false) =>
      (await store.query<{ id: number }>('INSERT INTO actions (team_id, name, deleted) VALUES ($1, $2, $3) RETURNING id', [team, name, deleted]))[0]!.id;
    const first = await insert(501, 'Signed up');
    const second = await insert(501, 'Signed up');
    const deleted = await insert(501, 'Signed up', true);
    const third = await insert(501, 'Signed up');
    // The name the second would get is already taken by a live action.
    const squatter = await insert(501, `Signed up (${second})`);
    const otherProject = await insert(502, 'Signed up');

    expect(await migratePostgres(store)).toEqual(expect.arrayContaining([100]));
    const names = new Map((await store.query<{ id: number; name: string }>('SELECT id, name FROM actions')).map((r) => [r.id, r.name]));
    expect([first, second, deleted, third, squatter, otherProject].map((id) => names.get(id))).toEqual([
      'Signed up',
      `Signed up (${second}-1)`,
      'Signed up',
      `Signed up (${third})`,
      `Signed up (${second})`,
      'Signed up',
    ]);
    await expect(insert(501, 'Signed up')).rejects.toMatchObject({ code: '23505' });
    // Deleted actions do not count.
    await expect(insert(501, 'Signed up', true)).resolves.toEqual(expect.any(Number));
  });
});
