import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { addDashboardTile, insertDashboard, insertInsight } from '@sightline/insights';
import { createMetadataStore, migratePostgres, POSTGRES_MIGRATIONS_DIR, type MetadataStore } from '@sightline/postgres';
import { createTestPostgresDatabase, insertFlag, type TestPostgresDatabase } from '@sightline/testkit';

/** Migration 0196: usage dashboards' generated insights, saved by earlier builds, leave the saved-insights list. */
describe('migration 0196 (usage insights unsaved)', () => {
  let database: TestPostgresDatabase;
  let store: MetadataStore;
  let before: string;
  beforeAll(async () => {
    database = await createTestPostgresDatabase('usage_insights_migration');
    store = await createMetadataStore({ url: database.url });
    // Every migration before 0196, as a database that has not taken it yet.
    before = mkdtempSync(join(tmpdir(), 'sightline-migrations-'));
    for (const file of readdirSync(POSTGRES_MIGRATIONS_DIR).filter((f) => /^\d{4}_/.test(f) && Number(f.slice(0, 4)) < 196)) {
      symlinkSync(join(POSTGRES_MIGRATIONS_DIR, file), join(before, file));
    }
    await migratePostgres(store, before);
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
    rmSync(before, { recursive: true, force: true });
  });

  it('unsaves the generated insights on usage dashboards, not ones a person edited nor same-named ones elsewhere', async () => {
    const { projectId } = await bootstrapInstance(store);
    const [{ id: userId }] = (await store.query<{ id: number }>('SELECT id FROM users ORDER BY id LIMIT 1')) as [{ id: number }];
    const flagId = await insertFlag(store, projectId, { key: 'old', filters: { groups: [] } });
    const usage = await insertDashboard(store, projectId, { name: 'Generated Dashboard: old Usage' }, userId);
    const other = await insertDashboard(store, projectId, { name: 'Mine' }, userId);
    await store.query('UPDATE feature_flags SET usage_dashboard_id = $1 WHERE id = $2', [usage.id, flagId]);
    const insight = async (dashboardId: number, name: string, editedBy: number | null) => {
      const row = await insertInsight(store, projectId, { name, filters: {}, saved: true }, userId, { lastModifiedById: editedBy });
      await addDashboardTile(store, dashboardId, row.id, {});
      return row.id;
    };
    const generated = await insight(usage.id, 'Feature Flag Called Total Volume', null);
    const generatedUnique = await insight(usage.id, 'Feature Flag calls made by unique users per variant', null);
    const edited = await insight(usage.id, 'Feature Viewed Total Volume', userId);
    const elsewhere = await insight(other.id, 'Feature Flag Called Total Volume', null);

    expect(await migratePostgres(store)).toEqual(expect.arrayContaining([196]));
    const saved = new Map((await store.query<{ id: number; saved: boolean }>('SELECT id, saved FROM insights')).map((r) => [r.id, r.saved]));
    expect([generated, generatedUnique, edited, elsewhere].map((id) => saved.get(id))).toEqual([false, false, true, true]);
  });
});
