import { hashPersonalApiKey } from '@sightline/auth';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '@sightline/testkit';
import { bootstrapInstance } from './bootstrap';
import { findPrincipalByKeyHash } from './personal-keys.repository';
import { findProjectByToken, listProjectsFor } from './projects.repository';

describe('bootstrap', () => {
  let database: TestPostgresDatabase;
  let stores: MetadataStore[];
  beforeEach(async () => {
    database = await createTestPostgresDatabase('accounts');
    stores = await Promise.all([0, 1, 2].map(() => createMetadataStore({ url: database.url })));
    await migratePostgres(stores[0]!);
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await database.drop();
  });

  it('creates the organisation, project 1, a user and an all-scopes key once, even from concurrent starts', async () => {
    const results = await Promise.all(stores.map((s) => bootstrapInstance(s)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const created = results.find((r) => r.created)!;
    expect(created.projectId).toBe(1);
    expect(created.projectApiKey).toMatch(/^phc_/);
    expect(created.personalApiKey).toMatch(/^phx_/);
    for (const r of results) expect(r.projectApiKey).toBe(created.projectApiKey);
    const db = stores[0]!;
    expect(await db.query('SELECT id FROM organizations')).toHaveLength(1);
    expect(await db.query('SELECT id FROM projects')).toHaveLength(1);
    // Stored only as a hash.
    const keys = await db.query<{ secure_value: string; scopes: string[] }>('SELECT secure_value, scopes FROM personal_api_keys');
    expect(keys).toEqual([{ secure_value: hashPersonalApiKey(created.personalApiKey!), scopes: ['*'] }]);
    expect(JSON.stringify(await db.query('SELECT * FROM personal_api_keys'))).not.toContain(created.personalApiKey!);
  });

  it('uses the keys given on first start, and finds the principal and projects by them', async () => {
    const db = stores[0]!;
    const result = await bootstrapInstance(db, { projectApiKey: 'phc_given_project_key', personalApiKey: 'phx_given_personal_key' });
    expect(result).toMatchObject({ created: true, projectApiKey: 'phc_given_project_key', personalApiKey: 'phx_given_personal_key' });
    expect((await findProjectByToken(db, 'phc_given_project_key'))?.id).toBe(1);
    expect(await findProjectByToken(db, 'phc_other')).toBeNull();
    const principal = await findPrincipalByKeyHash(db, hashPersonalApiKey('phx_given_personal_key'));
    expect(principal).toMatchObject({ scopes: ['*'], scopedTeams: null });
    expect((await listProjectsFor(db, principal!)).map((p) => p.id)).toEqual([1]);
    // A second start changes nothing and reveals no personal key.
    const again = await bootstrapInstance(db, { projectApiKey: 'phc_ignored_now', personalApiKey: 'phx_ignored_now' });
    expect(again).toEqual({ created: false, projectId: 1, projectApiKey: 'phc_given_project_key' });
  });
});
