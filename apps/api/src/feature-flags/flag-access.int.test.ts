import { testEventRow } from '@sightline/testkit';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createQueryService, parseTrendFilter } from '@sightline/insights';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-03-01T12:00:00Z');
const DAY = 86_400_000;
const FLAGS = '/api/projects/1/feature_flags';
const ROLES = '/api/organizations/@current/roles';

const event = (name: string, properties: Record<string, unknown>, atMs = NOW - DAY, distinctId = 'u1') =>
  testEventRow({ event: name, properties, atMs, distinctId });

describe('flag roles, access, dashboards and static cohorts', () => {
  let f: FlagFixture;
  let colleague: { id: number; uuid: string };
  const admin = bearer(ADMIN_KEY);
  const colleagueKey = bearer('phx_colleague');
  const createFlag = async (body: Record<string, unknown>) => {
    const res = await request(f.app).post(`${FLAGS}/`).set(admin).send(body);
    expect(res.status).toBe(201);
    return res.body as { id: number; key: string; usage_dashboard: number | null };
  };

  beforeAll(async () => {
    f = await createFlagFixture('flags_access', () => NOW);
    colleague = await f.addUser('colleague@sightline.local');
    await f.addKey('phx_colleague', ['*'], colleague.id);
    await f.addKey('phx_org_read', ['organization:read']);
  });
  afterAll(() => f.close());

  describe('organisation roles', () => {
    it('creates, lists, retrieves and deletes roles, with members', async () => {
      const created = await request(f.app).post(`${ROLES}/`).set(admin).send({ name: 'Engineers' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Engineers',
        feature_flags_access_level: 37,
        created_by: { id: f.adminUserId, email: 'admin@sightline.local' },
        members: [],
      });
      const member = await request(f.app).post(`${ROLES}/${created.body.id}/role_memberships/`).set(admin).send({ user_uuid: colleague.uuid });
      expect(member.status).toBe(201);
      expect(member.body).toMatchObject({ role_id: created.body.id, user: { uuid: colleague.uuid, email: 'colleague@sightline.local' } });
      const again = await request(f.app).post(`${ROLES}/${created.body.id}/role_memberships/`).set(admin).send({ user_uuid: colleague.uuid });
      expect(again.body).toEqual({ type: 'validation_error', code: 'invalid', detail: 'User is already part of the role.', attr: null });

      const list = await request(f.app).get(`/api/organizations/${f.organizationId}/roles/`).set(bearer('phx_org_read'));
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({
        count: 1,
        next: null,
        previous: null,
        results: [{ name: 'Engineers', members: [{ user: { uuid: colleague.uuid } }] }],
      });
      const one = await request(f.app).get(`${ROLES}/${created.body.id}/`).set(admin);
      expect(one.body.id).toBe(created.body.id);

      const duplicate = await request(f.app).post(`${ROLES}/`).set(admin).send({ name: 'engineers' });
      expect(duplicate.body).toEqual({ type: 'validation_error', code: 'unique', detail: 'There is already a role with this name.', attr: 'name' });
      const nameless = await request(f.app).post(`${ROLES}/`).set(admin).send({});
      expect(nameless.body).toMatchObject({ code: 'required', attr: 'name' });

      const temporary = await request(f.app).post(`${ROLES}/`).set(admin).send({ name: 'Temporary', feature_flags_access_level: 21 });
      expect(temporary.body.feature_flags_access_level).toBe(21);
      expect((await request(f.app).delete(`${ROLES}/${temporary.body.id}/`).set(admin)).status).toBe(204);
      expect((await request(f.app).get(`${ROLES}/${temporary.body.id}/`).set(admin)).status).toBe(404);
      expect((await request(f.app).get(`/api/organizations/${randomUUID()}/roles/`).set(admin)).status).toBe(403);
    });
  });

  describe('organisation roles created at once', () => {
    it('creates one of concurrent roles with one name (any case) and answers the others 400, never 500', async () => {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          request(f.app)
            .post(`${ROLES}/`)
            .set(admin)
            .send({ name: i % 2 ? 'Racers' : 'RACERS' }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      const refused = answers.filter((a) => a.status !== 201);
      expect(refused.map((a) => [a.status, a.body.code, a.body.attr])).toEqual(refused.map(() => [400, 'unique', 'name']));
      const [row] = await f.db.query<{ n: string }>("SELECT count(*) AS n FROM roles WHERE lower(name) = 'racers'");
      expect(Number(row!.n)).toBe(1);
      const created = answers.find((a) => a.status === 201)!;
      expect((await request(f.app).delete(`${ROLES}/${created.body.id}/`).set(admin)).status).toBe(204);
    });
  });

  describe('role access', () => {
    let flag: { id: number };
    let engineers: string;
    let designers: string;
    beforeAll(async () => {
      flag = await createFlag({ key: 'guarded', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
      const roles = await request(f.app).get(`${ROLES}/`).set(admin);
      engineers = roles.body.results.find((r: { name: string }) => r.name === 'Engineers').id;
      designers = (await request(f.app).post(`${ROLES}/`).set(admin).send({ name: 'Designers' })).body.id;
    });

    it('grants a role, lists and retrieves the grant, refuses duplicates and unknown roles, and revokes it', async () => {
      const base = `${FLAGS}/${flag.id}/role_access`;
      const granted = await request(f.app).post(`${base}/`).set(admin).send({ role_id: designers });
      expect(granted.status).toBe(201);
      expect(Object.keys(granted.body).sort()).toEqual(['added_at', 'feature_flag', 'id', 'role', 'updated_at']);
      expect(granted.body).toMatchObject({ feature_flag: { id: flag.id, key: 'guarded' }, role: { id: designers, name: 'Designers' } });

      const list = await request(f.app).get(`${base}/`).query({ limit: '10' }).set(admin);
      expect(list.body).toMatchObject({ count: 1, next: null, previous: null, results: [{ id: granted.body.id }] });
      expect((await request(f.app).get(`${base}/${granted.body.id}/`).set(admin)).body.role.name).toBe('Designers');

      const duplicate = await request(f.app).post(`${base}/`).set(admin).send({ role_id: designers });
      expect(duplicate.body).toEqual({ type: 'validation_error', code: 'unique', detail: 'The fields feature_flag, role must make a unique set.', attr: null });
      const unknown = await request(f.app).post(`${base}/`).set(admin).send({ role_id: 'nope' });
      expect(unknown.body).toEqual({ type: 'validation_error', code: 'does_not_exist', detail: 'Invalid pk "nope" - object does not exist.', attr: 'role_id' });
      const missing = await request(f.app).post(`${base}/`).set(admin).send({});
      expect(missing.body).toMatchObject({ code: 'required', attr: 'role_id' });

      // Only Designers may now edit: the colleague (an Engineer) can view but not edit.
      const seen = await request(f.app).get(`${FLAGS}/${flag.id}/`).set(colleagueKey);
      expect(seen.body).toMatchObject({ can_edit: false, user_access_level: 'viewer' });
      const edit = await request(f.app).patch(`${FLAGS}/${flag.id}/`).set(colleagueKey).send({ name: 'mine' });
      expect(edit.status).toBe(403);
      expect(edit.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'You do not have editor access to this resource.',
        attr: null,
      });
      const grantAsViewer = await request(f.app).post(`${base}/`).set(colleagueKey).send({ role_id: engineers });
      expect(grantAsViewer.body.detail).toBe("You can't edit roles for this feature flag.");

      // Granting Engineers too lets the colleague edit.
      const engineersGrant = await request(f.app).post(`${base}/`).set(admin).send({ role_id: engineers });
      expect((await request(f.app).get(`${FLAGS}/${flag.id}/`).set(colleagueKey)).body).toMatchObject({ can_edit: true, user_access_level: 'editor' });

      expect((await request(f.app).delete(`${base}/${granted.body.id}/`).set(admin)).status).toBe(204);
      expect((await request(f.app).delete(`${base}/${engineersGrant.body.id}/`).set(admin)).status).toBe(204);
      expect((await request(f.app).get(`${base}/${granted.body.id}/`).set(admin)).status).toBe(404);
      expect((await request(f.app).get(`${base}/`).set(admin)).body.count).toBe(0);
    });
  });

  describe('access controls', () => {
    it('shows and sets a flag’s controls and the project-wide rule, and enforces them', async () => {
      const flag = await createFlag({ key: 'controlled', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
      const base = `${FLAGS}/${flag.id}`;
      const empty = await request(f.app).get(`${base}/access_controls/`).set(admin);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({
        access_controls: [],
        available_access_levels: ['none', 'viewer', 'editor', 'manager'],
        default_access_level: 'editor',
        minimum_access_level: 'none',
        maximum_access_level: 'manager',
        user_access_level: 'manager',
        user_can_edit_access_levels: true,
      });

      const put = await request(f.app).put(`${base}/access_controls/`).set(admin).send({ access_level: 'viewer', organization_member: colleague.uuid });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        access_level: 'viewer',
        resource: 'feature_flag',
        resource_id: String(flag.id),
        organization_member: colleague.uuid,
        role: null,
      });
      const viewed = await request(f.app).get(`${base}/access_controls/`).set(colleagueKey);
      expect(viewed.body).toMatchObject({ user_access_level: 'viewer', user_can_edit_access_levels: false, access_controls: [{ access_level: 'viewer' }] });
      expect((await request(f.app).patch(`${base}/`).set(colleagueKey).send({ name: 'x' })).status).toBe(403);
      const notManager = await request(f.app)
        .put(`${base}/access_controls/`)
        .set(colleagueKey)
        .send({ access_level: 'manager', organization_member: colleague.uuid });
      expect(notManager.body.detail).toBe('Must be manager to modify feature_flag permissions.');
      const badLevel = await request(f.app).put(`${base}/access_controls/`).set(admin).send({ access_level: 'owner' });
      expect(badLevel.body).toMatchObject({ code: 'invalid', attr: 'access_level' });

      expect((await request(f.app).put(`${base}/access_controls/`).set(admin).send({ access_level: null, organization_member: colleague.uuid })).status).toBe(
        204,
      );
      expect((await request(f.app).patch(`${base}/`).set(colleagueKey).send({ name: 'x' })).status).toBe(200);

      // Project-wide: nobody but creators may see flags; the colleague then gets 403 on another's flag.
      const global = await request(f.app).put(`${base}/global_access_controls/`).set(admin).send({ access_level: 'none' });
      expect(global.body).toMatchObject({ access_level: 'none', resource_id: null });
      const listed = await request(f.app).get(`${base}/global_access_controls/`).set(admin);
      expect(listed.body.access_controls).toEqual([expect.objectContaining({ access_level: 'none', resource: 'feature_flag', resource_id: null })]);
      expect((await request(f.app).get(`${base}/`).set(colleagueKey)).status).toBe(403);
      expect((await request(f.app).get(`${base}/`).set(admin)).status).toBe(200);
      const colleaguesList = await request(f.app).get(`${FLAGS}/`).query({ search: 'controlled' }).set(colleagueKey);
      expect(colleaguesList.body).toMatchObject({ count: 0, results: [] });
      expect((await request(f.app).get(`${FLAGS}/`).query({ search: 'controlled' }).set(admin)).body.count).toBe(1);
      await request(f.app).put(`${base}/global_access_controls/`).set(admin).send({ access_level: null }).expect(204);
      expect((await request(f.app).get(`${base}/`).set(colleagueKey)).status).toBe(200);
    });
  });

  describe('a flag the caller has no access to', () => {
    it('is left out of every read: status, activity, role access, controls and local evaluation', async () => {
      const hidden = await createFlag({ key: 'hidden-from-colleague', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
      const open = await createFlag({ key: 'open-to-colleague', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
      await request(f.app).patch(`${FLAGS}/${hidden.id}/`).set(admin).send({ name: 'changed once' }).expect(200);
      const none = await request(f.app)
        .put(`${FLAGS}/${hidden.id}/access_controls/`)
        .set(admin)
        .send({ access_level: 'none', organization_member: colleague.uuid });
      expect(none.status).toBe(200);
      const token = (await request(f.app).get('/api/projects/1/').set(admin)).body.api_token as string;

      const refused = [
        `${FLAGS}/${hidden.id}/`,
        `${FLAGS}/${hidden.id}/status/`,
        `${FLAGS}/${hidden.id}/activity/`,
        `${FLAGS}/${hidden.id}/role_access/`,
        `${FLAGS}/${hidden.id}/access_controls/`,
        `/api/environments/1/feature_flags/${hidden.id}/status/`,
      ];
      for (const path of refused) {
        const res = await request(f.app).get(path).set(colleagueKey);
        expect([path, res.status, res.text.includes('hidden-from-colleague')]).toEqual([path, 403, false]);
      }
      expect((await request(f.app).get(`${FLAGS}/${open.id}/status/`).set(colleagueKey)).status).toBe(200);

      for (const path of ['/api/feature_flag/local_evaluation', `/flags/definitions?token=${token}`]) {
        const colleagues = await request(f.app).get(path).set(colleagueKey);
        expect(colleagues.status).toBe(200);
        const keys = (colleagues.body.flags as { key: string }[]).map((flag) => flag.key);
        expect([path, keys.includes('open-to-colleague'), colleagues.text.includes('hidden-from-colleague')]).toEqual([path, true, false]);
        const admins = await request(f.app).get(path).set(admin);
        expect((admins.body.flags as { key: string }[]).map((flag) => flag.key)).toEqual(
          expect.arrayContaining(['hidden-from-colleague', 'open-to-colleague']),
        );
        expect(admins.headers['etag']).not.toBe(colleagues.headers['etag']);
      }

      const activity = await request(f.app).get(`${FLAGS}/activity/`).query({ limit: '100' }).set(colleagueKey);
      expect(activity.status).toBe(200);
      const items = (activity.body.results as { item_id: string }[]).map((r) => r.item_id);
      expect([items.includes(String(open.id)), items.includes(String(hidden.id)), activity.text.includes('hidden-from-colleague')]).toEqual([
        true,
        false,
        false,
      ]);
      const adminActivity = await request(f.app).get(`${FLAGS}/activity/`).query({ limit: '100' }).set(admin);
      expect((adminActivity.body.results as { item_id: string }[]).map((r) => r.item_id)).toContain(String(hidden.id));

      await request(f.app)
        .put(`${FLAGS}/${hidden.id}/access_controls/`)
        .set(admin)
        .send({ access_level: null, organization_member: colleague.uuid })
        .expect(204);
      expect((await request(f.app).get(`${FLAGS}/${hidden.id}/status/`).set(colleagueKey)).status).toBe(200);
    });
  });

  describe('usage dashboards', () => {
    it('creates one on flag creation whose insights count only this flag’s $feature_flag_called events', async () => {
      const flag = await createFlag({ key: 'dash-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
      expect(flag.usage_dashboard).toEqual(expect.any(Number));
      const [dashboard] = await f.db.query<{ name: string; description: string }>('SELECT name, description FROM dashboards WHERE id = $1', [
        flag.usage_dashboard,
      ]);
      expect(dashboard).toEqual({
        name: 'Generated Dashboard: dash-flag Usage',
        description: 'This dashboard was generated by the feature flag with key (dash-flag)',
      });
      const insights = await f.db.query<{ name: string; filters: unknown }>(
        'SELECT i.name, i.filters FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id WHERE t.dashboard_id = $1 ORDER BY i.id',
        [flag.usage_dashboard],
      );
      expect(insights.map((i) => i.name)).toEqual(['Feature Flag Called Total Volume', 'Feature Flag calls made by unique users per variant']);

      await insertEvents(f.ch, [
        event('$feature_flag_called', { $feature_flag: 'dash-flag', $feature_flag_response: true }),
        event('$feature_flag_called', { $feature_flag: 'dash-flag', $feature_flag_response: true }, NOW - DAY, 'u2'),
        event('$feature_flag_called', { $feature_flag: 'other-flag', $feature_flag_response: true }),
        event('$pageview', { $feature_flag: 'dash-flag' }),
      ]);
      const [total, unique] = await Promise.all(
        insights.map((i) =>
          createQueryService({ db: f.db, ch: f.ch, cacheTtlMs: 0 }).run('TrendsQuery', { id: 1, timezone: 'UTC' }, parseTrendFilter(i.filters), NOW),
        ),
      );
      expect(total!.result[0]!.count).toBe(2);
      // ActionsTable is a total-value display: one number over the whole range.
      expect(unique!.result[0]).toMatchObject({ count: 0, aggregated_value: 2 });
      expect(total!.result[0]!.days).toHaveLength(31);
    });

    it('POST dashboard makes a new usage dashboard; enrich_usage_dashboard answers PostHog’s refusals, then adds insights', async () => {
      const flag = await createFlag({
        key: 'enrich-me',
        filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
        _should_create_usage_dashboard: false,
      });
      const base = `${FLAGS}/${flag.id}`;
      const notFound = await request(f.app).post(`${base}/enrich_usage_dashboard/`).set(admin).send({});
      expect([notFound.status, notFound.body]).toEqual([400, { success: false, error: 'Usage dashboard not found' }]);

      expect((await request(f.app).post(`${base}/dashboard/`).set(admin).send({})).body).toEqual({ success: true });
      const withDashboard = (await request(f.app).get(`${base}/`).set(admin)).body;
      expect(withDashboard.usage_dashboard).toEqual(expect.any(Number));

      const noData = await request(f.app).post(`${base}/enrich_usage_dashboard/`).set(admin).send({});
      expect([noData.status, noData.body]).toEqual([400, { success: false, error: 'No enriched analytics available for this feature flag' }]);

      await insertEvents(f.ch, [event('$feature_view', { feature_flag: 'enrich-me' }), event('$feature_interaction', { feature_flag: 'enrich-me' })]);
      expect((await request(f.app).post(`${base}/enrich_usage_dashboard/`).set(admin).send({})).body).toEqual({ success: true });
      expect((await request(f.app).get(`${base}/`).set(admin)).body.has_enriched_analytics).toBe(true);
      const names = await f.db.query<{ name: string; filters: unknown }>(
        'SELECT i.name, i.filters FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id WHERE t.dashboard_id = $1 ORDER BY i.id',
        [withDashboard.usage_dashboard],
      );
      expect(names.map((n) => n.name)).toEqual([
        'Feature Flag Called Total Volume',
        'Feature Flag calls made by unique users per variant',
        'Feature Interaction Total Volume',
        'Feature Viewed Total Volume',
      ]);
      const viewed = await createQueryService({ db: f.db, ch: f.ch, cacheTtlMs: 0 }).run(
        'TrendsQuery',
        { id: 1, timezone: 'UTC' },
        parseTrendFilter(names[3]!.filters),
        NOW,
      );
      expect(viewed.result[0]!.count).toBe(1);
      const twice = await request(f.app).post(`${base}/enrich_usage_dashboard/`).set(admin).send({});
      expect(twice.body).toEqual({ success: false, error: 'Usage dashboard already has enriched data' });
    });
  });

  describe('static cohort for a flag', () => {
    it('holds exactly the persons for whom the flag is on', async () => {
      const persons: [string, Record<string, unknown>][] = [
        ['p-pro-1', { plan: 'pro' }],
        ['p-pro-2', { plan: 'pro', email: 'x@y.com' }],
        ['p-free', { plan: 'free' }],
        ['p-none', {}],
      ];
      const ids: Record<string, number> = {};
      for (const [distinctId, properties] of persons) {
        const [person] = await f.db.query<{ id: string }>('INSERT INTO persons (team_id, uuid, properties) VALUES (1, $1, $2) RETURNING id', [
          randomUUID(),
          JSON.stringify(properties),
        ]);
        await f.db.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES (1, $1, $2)', [distinctId, person!.id]);
        ids[distinctId] = Number(person!.id);
      }
      const flag = await createFlag({
        key: 'pro-only',
        filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] },
      });
      const res = await request(f.app).post(`${FLAGS}/${flag.id}/create_static_cohort_for_flag/`).set(admin).send({});
      expect(res.status).toBe(201);
      expect(res.body.cohort).toMatchObject({
        name: 'Users with feature flag pro-only enabled at 2024-03-01 12:00:00',
        is_static: true,
        is_calculating: false,
        count: 2,
        created_by: { id: f.adminUserId },
      });
      const members = await f.db.query<{ person_id: string }>('SELECT person_id FROM cohort_people WHERE cohort_id = $1 ORDER BY person_id', [
        res.body.cohort.id,
      ]);
      expect(members.map((m) => Number(m.person_id))).toEqual([ids['p-pro-1'], ids['p-pro-2']]);

      // A cohort condition on the new static cohort matches its members through the engine too.
      const followUp = await createFlag({
        key: 'cohort-follow-up',
        filters: { groups: [{ properties: [{ key: 'id', value: res.body.cohort.id, type: 'cohort' }], rollout_percentage: 100 }] },
      });
      const again = await request(f.app).post(`${FLAGS}/${followUp.id}/create_static_cohort_for_flag/`).set(admin).send({});
      expect(again.body.cohort.count).toBe(2);
    });
  });
});
