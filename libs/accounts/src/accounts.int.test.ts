import { hashPersonalApiKey, hashSecretToken } from '@sightline/auth';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '@sightline/testkit';
import { bootstrapInstance } from './bootstrap';
import { issueFirstStartPasswordToken } from './password-setup';
import { consumePasswordSetupToken, setUserPassword } from './sign-in.repository';
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

  it('issues the first-start link in one process only when several api processes start together on one database', async () => {
    await bootstrapInstance(stores[0]!);
    const now = Date.parse('2026-03-02T10:00:00Z');
    const tokens = await Promise.all(stores.map((s) => issueFirstStartPasswordToken(s, now, { replaceUnused: false })));
    const printed = tokens.filter((t): t is string => t !== null);
    expect(printed).toHaveLength(1);
    // A later start while it is unused prints none and leaves it working.
    expect(await issueFirstStartPasswordToken(stores[1]!, now + 60_000, { replaceUnused: false })).toBeNull();
    const db = stores[0]!;
    const [user] = await db.query<{ id: number }>('SELECT id FROM users ORDER BY id LIMIT 1');
    const hashes = await db.query<{ token_hash: string }>('SELECT token_hash FROM password_setup_tokens WHERE used_at IS NULL');
    expect(hashes).toEqual([{ token_hash: hashSecretToken(printed[0]!) }]);
    // Once it expired, the next start issues a fresh one.
    const dayLater = now + 24 * 3_600_000 + 1;
    const fresh = await issueFirstStartPasswordToken(stores[2]!, dayLater, { replaceUnused: false });
    expect(fresh).toEqual(expect.any(String));
    // In embedded mode (one process) every start replaces the link, cancelling the previous one.
    const replaced = await issueFirstStartPasswordToken(stores[0]!, dayLater, { replaceUnused: true });
    expect(replaced).not.toBe(fresh);
    expect(await db.transaction((tx) => consumePasswordSetupToken(tx, hashSecretToken(fresh!), new Date(dayLater)))).toBeNull();
    expect(await db.transaction((tx) => consumePasswordSetupToken(tx, hashSecretToken(replaced!), new Date(dayLater)))).toBe(user!.id);
    // Once a user has a password, no start issues one.
    await setUserPassword(db, user!.id, 'stand-in hash');
    expect(await issueFirstStartPasswordToken(stores[1]!, dayLater, { replaceUnused: true })).toBeNull();
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
