import request from 'supertest';
import { createProjectTokenCache } from '@sightline/accounts';
import { hashPersonalApiKey } from '@sightline/auth';
import { waitFor } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

describe('personal API keys and projects through the API', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);

  beforeAll(async () => {
    f = await createFlagFixture('keysapi', () => Date.parse('2024-01-10T15:00:00Z'));
    await f.addKey('phx_key_manager_only', ['personal_api_key:write', 'insight:read']);
    await f.addKey('phx_key_reader_only', ['personal_api_key:read']);
  });
  afterAll(() => f.close());

  it('issues a key shown once, stores only its hash, and the key works with exactly its scopes', async () => {
    const created = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'dashboard script', scopes: ['insight:read', 'person:read'], scoped_teams: [1] });
    expect(created.status).toBe(201);
    const value = created.body.value as string;
    expect(value).toMatch(/^phx_[A-Za-z0-9]{47}$/);
    expect(created.body).toMatchObject({
      label: 'dashboard script',
      mask_value: `${value.slice(0, 6)}...${value.slice(-4)}`,
      scopes: ['insight:read', 'person:read'],
      scoped_teams: [1],
      scoped_organizations: [],
      last_used_at: null,
    });
    const stored = await f.db.query<Record<string, unknown>>('SELECT * FROM personal_api_keys WHERE id = $1', [created.body.id]);
    expect(stored[0]!['secure_value']).toBe(hashPersonalApiKey(value));
    expect(JSON.stringify(stored)).not.toContain(value);

    expect((await request(f.app).get('/api/projects/1/insights/').set(bearer(value))).status).toBe(200);
    const denied = await request(f.app).get('/api/projects/1/feature_flags/').set(bearer(value));
    expect([denied.status, denied.body.detail]).toEqual([403, "API key missing required scope 'feature_flag:read'"]);

    // Listed and retrieved masked, with last_used_at set by the use above.
    const list = await request(f.app).get('/api/personal_api_keys/').set(admin);
    const listed = (list.body.results as Record<string, unknown>[]).find((k) => k['id'] === created.body.id)!;
    expect(listed['value']).toBeUndefined();
    expect(listed['mask_value']).toBe(created.body.mask_value);
    expect(JSON.stringify(list.body)).not.toContain(value);
    // The use writes last_used_at beside its answer, not before it.
    const retrieved = await waitFor(
      async () => {
        const answer = await request(f.app).get(`/api/personal_api_keys/${created.body.id}/`).set(admin);
        return answer.body.last_used_at !== null && answer;
      },
      { timeoutMs: 5000, intervalMs: 20, description: 'last_used_at written' },
    );
    expect(retrieved.body.last_used_at).toEqual(expect.any(String));
    expect(retrieved.body.value).toBeUndefined();
  });

  it('validates scopes against the known objects', async () => {
    const unknown = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'x', scopes: ['insight:read', 'rocket:launch'] });
    expect(unknown.body).toEqual({ type: 'validation_error', code: 'invalid', detail: 'Invalid scope: rocket:launch', attr: 'scopes__1' });
    const missing = await request(f.app).post('/api/personal_api_keys/').set(admin).send({ label: 'x' });
    expect(missing.body).toMatchObject({ code: 'required', attr: 'scopes' });
    const long = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'x'.repeat(41), scopes: ['*'] });
    expect(long.body).toMatchObject({ code: 'max_length', attr: 'label' });
    const team = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'x', scopes: ['*'], scoped_teams: [999] });
    expect(team.body).toMatchObject({ code: 'invalid', attr: 'scoped_teams' });
  });

  it('lets personal_api_key:write manage keys but never grant more than the caller holds', async () => {
    const manager = bearer('phx_key_manager_only');
    const ok = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(manager)
      .send({ label: 'narrower', scopes: ['insight:read'] });
    expect(ok.status).toBe(201);
    const escalate = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(manager)
      .send({ label: 'wider', scopes: ['feature_flag:write'] });
    expect([escalate.status, escalate.body.code]).toEqual([403, 'permission_denied']);
    const star = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(manager)
      .send({ label: 'all', scopes: ['*'] });
    expect(star.status).toBe(403);
    const reader = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(bearer('phx_key_reader_only'))
      .send({ label: 'r', scopes: ['insight:read'] });
    expect(reader.body.detail).toBe("API key missing required scope 'personal_api_key:write'");
    const current = await request(f.app).get('/api/personal_api_keys/@current/').set(bearer('phx_key_reader_only'));
    expect([current.status, current.body.label]).toEqual([200, 'phx_key_reader_only']);
  });

  it('rolls a key (the old value stops working), changes it with PATCH and deletes it', async () => {
    const created = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'to roll', scopes: ['project:read'] });
    const oldValue = created.body.value as string;
    expect((await request(f.app).get('/api/projects/').set(bearer(oldValue))).status).toBe(200);
    const rolled = await request(f.app).post(`/api/personal_api_keys/${created.body.id}/roll/`).set(admin);
    expect(rolled.status).toBe(200);
    expect(rolled.body.value).toMatch(/^phx_/);
    expect(rolled.body.value).not.toBe(oldValue);
    expect(rolled.body.last_rolled_at).toEqual(expect.any(String));
    expect((await request(f.app).get('/api/projects/').set(bearer(oldValue))).status).toBe(401);
    expect((await request(f.app).get('/api/projects/').set(bearer(rolled.body.value))).status).toBe(200);

    const patched = await request(f.app)
      .patch(`/api/personal_api_keys/${created.body.id}/`)
      .set(admin)
      .send({ label: 'renamed', scopes: ['project:write'] });
    expect(patched.body).toMatchObject({ label: 'renamed', scopes: ['project:write'] });
    expect((await request(f.app).delete(`/api/personal_api_keys/${created.body.id}/`).set(admin)).status).toBe(204);
    expect((await request(f.app).get('/api/projects/').set(bearer(rolled.body.value))).status).toBe(401);
    expect((await request(f.app).get(`/api/personal_api_keys/${created.body.id}/`).set(admin)).status).toBe(404);
  });

  it('creates a project with a fresh project key that the token cache finds, and resets it', async () => {
    const cache = createProjectTokenCache(f.db);
    const created = await request(f.app)
      .post('/api/projects/')
      .set(admin)
      .send({ name: 'Second', timezone: 'Europe/Berlin', person_display_name_properties: ['email'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Second', timezone: 'Europe/Berlin', person_display_name_properties: ['email'] });
    const token = created.body.api_token as string;
    expect(token).toMatch(/^phc_[A-Za-z0-9]{43}$/);
    expect(await cache(token)).toBe(created.body.id);

    const patched = await request(f.app)
      .patch(`/api/projects/${created.body.id}/`)
      .set(admin)
      .send({ person_display_name_properties: ['name', 'email'] });
    expect(patched.body.person_display_name_properties).toEqual(['name', 'email']);
    const bad = await request(f.app).patch(`/api/projects/${created.body.id}/`).set(admin).send({ person_display_name_properties: 'email' });
    expect(bad.body).toMatchObject({ code: 'not_a_list', attr: 'person_display_name_properties' });

    // A gateway cache that saw the old key before the reset keeps it for its positive TTL only.
    let clock = 0;
    const gateway = createProjectTokenCache(f.db, { positiveTtlMs: 300_000, negativeTtlMs: 10_000, now: () => clock });
    expect(await gateway(token)).toBe(created.body.id);
    const reset = await request(f.app).patch(`/api/projects/${created.body.id}/reset_token/`).set(admin);
    expect(reset.status).toBe(200);
    expect(reset.body.api_token).not.toBe(token);
    // A fresh cache (another gateway, or this one once the old entry expired) knows only the new key.
    const later = createProjectTokenCache(f.db);
    expect(await later(reset.body.api_token)).toBe(created.body.id);
    expect(await later(token)).toBeNull();
    expect(await gateway(reset.body.api_token)).toBe(created.body.id);
    expect(await gateway(token)).toBe(created.body.id);
    clock += 300_001;
    expect(await gateway(token)).toBeNull();
  });

  it('refuses project creation to a key restricted to projects', async () => {
    await f.db.query(
      `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams) VALUES ($1, 'scoped', $2, 'phx_sc...oped', '{*}', '{1}')`,
      [f.adminUserId, hashPersonalApiKey('phx_scoped_to_one')],
    );
    const res = await request(f.app).post('/api/projects/').set(bearer('phx_scoped_to_one')).send({ name: 'Nope' });
    expect([res.status, res.body.code]).toEqual([403, 'permission_denied']);
    expect((await request(f.app).post('/api/projects/').set(admin).send({})).body).toMatchObject({ code: 'required', attr: 'name' });
  });

  describe('a key never manages a key with powers it lacks (the escalation probes)', () => {
    let projectTwo: number;
    /** A key of the admin user with exactly these powers, straight into the store. */
    const keyWith = async (scopes: string[], scopedTeams: number[] | null = null) => {
      const value = `phx_probe_${Math.random().toString(36).slice(2)}${Date.now()}`;
      const [row] = await f.db.query<{ id: number }>(
        `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams) VALUES ($1, 'probe', $2, 'phx_pr...obe', $3, $4) RETURNING id`,
        [f.adminUserId, hashPersonalApiKey(value), scopes, scopedTeams],
      );
      return { id: row!.id, value };
    };
    const stored = async (id: number) =>
      (await f.db.query<{ scopes: string[]; scoped_teams: number[] | null }>('SELECT scopes, scoped_teams FROM personal_api_keys WHERE id = $1', [id]))[0];

    beforeAll(async () => {
      const created = await request(f.app).post('/api/projects/').set(admin).send({ name: 'Probe two' });
      projectTwo = created.body.id as number;
    });

    it('1: a key restricted to project 2 cannot issue a key without that restriction', async () => {
      const restricted = await keyWith(['*'], [projectTwo]);
      const res = await request(f.app)
        .post('/api/personal_api_keys/')
        .set(bearer(restricted.value))
        .send({ label: 'wide', scopes: ['insight:read'] });
      expect([res.status, res.body.code]).toEqual([403, 'permission_denied']);
      expect(res.body.value).toBeUndefined();
      // Within its restriction it still issues keys.
      const narrow = await request(f.app)
        .post('/api/personal_api_keys/')
        .set(bearer(restricted.value))
        .send({ label: 'narrow', scopes: ['insight:read'], scoped_teams: [projectTwo] });
      expect([narrow.status, narrow.body.scoped_teams]).toEqual([201, [projectTwo]]);
      expect((await request(f.app).get('/api/projects/1/insights/').set(bearer(narrow.body.value))).status).toBe(403);
    });

    it("2: a key restricted to project 2 cannot roll the user's unrestricted key", async () => {
      const restricted = await keyWith(['*'], [projectTwo]);
      const unrestricted = await keyWith(['*']);
      const res = await request(f.app).post(`/api/personal_api_keys/${unrestricted.id}/roll/`).set(bearer(restricted.value));
      expect([res.status, res.body.code]).toEqual([403, 'permission_denied']);
      expect(res.body.value).toBeUndefined();
      expect((await request(f.app).get('/api/projects/1/insights/').set(bearer(unrestricted.value))).status).toBe(200);
    });

    it('3: a key holding only personal_api_key:write cannot roll a * key', async () => {
      const manager = await keyWith(['personal_api_key:write']);
      const star = await keyWith(['*']);
      const res = await request(f.app).post(`/api/personal_api_keys/${star.id}/roll/`).set(bearer(manager.value));
      expect([res.status, res.body.code]).toEqual([403, 'permission_denied']);
      expect(res.body.value).toBeUndefined();
      // It may roll itself and keys within its powers.
      const peer = await keyWith(['personal_api_key:write']);
      expect((await request(f.app).post(`/api/personal_api_keys/${peer.id}/roll/`).set(bearer(manager.value))).status).toBe(200);
      const self = await request(f.app).post('/api/personal_api_keys/@current/roll/').set(bearer(manager.value));
      expect(self.status).toBe(200);
      expect((await request(f.app).get('/api/personal_api_keys/@current/').set(bearer(self.body.value))).status).toBe(200);
    });

    it("4: a key holding only personal_api_key:write cannot lift another key's project restriction", async () => {
      const manager = await keyWith(['personal_api_key:write']);
      const scoped = await keyWith(['*'], [projectTwo]);
      for (const body of [{ scoped_teams: [] }, { scoped_teams: null }, { label: 'renamed' }]) {
        const res = await request(f.app).patch(`/api/personal_api_keys/${scoped.id}/`).set(bearer(manager.value)).send(body);
        expect([res.status, res.body.code]).toEqual([403, 'permission_denied']);
      }
      expect(await stored(scoped.id)).toEqual({ scopes: ['*'], scoped_teams: [projectTwo] });
      expect((await request(f.app).delete(`/api/personal_api_keys/${scoped.id}/`).set(bearer(manager.value))).status).toBe(403);
    });

    it('5: a key restricted to project 2 cannot grant scopes to an unrestricted key', async () => {
      const restricted = await keyWith(['*'], [projectTwo]);
      const unrestricted = await keyWith(['project:read']);
      const res = await request(f.app)
        .patch(`/api/personal_api_keys/${unrestricted.id}/`)
        .set(bearer(restricted.value))
        .send({ scopes: ['*'] });
      expect([res.status, res.body.code]).toEqual([403, 'permission_denied']);
      expect(await stored(unrestricted.id)).toEqual({ scopes: ['project:read'], scoped_teams: null });
      expect((await request(f.app).get('/api/projects/1/insights/').set(bearer(unrestricted.value))).status).toBe(403);
      // Nor widen itself.
      const self = await request(f.app).patch('/api/personal_api_keys/@current/').set(bearer(restricted.value)).send({ scoped_teams: null });
      expect(self.status).toBe(403);
      expect(await stored(restricted.id)).toEqual({ scopes: ['*'], scoped_teams: [projectTwo] });
    });
  });
});
