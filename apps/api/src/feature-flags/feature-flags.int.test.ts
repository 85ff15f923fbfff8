import request from 'supertest';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-03-01T12:00:00Z');
const DAY = 86_400_000;
const FLAGS = '/api/projects/1/feature_flags';

const USER_FIELDS = ['id', 'uuid', 'distinct_id', 'first_name', 'last_name', 'email', 'is_email_verified', 'hedgehog_config', 'role_at_organization'];
/** Every field of a flag in the answer (docs/http-api.md#feature-flags). */
const INTERFACE_FIELDS = [
  'id',
  'name',
  'key',
  'filters',
  'deleted',
  'active',
  'created_by',
  'created_at',
  'is_simple_flag',
  'rollout_percentage',
  'ensure_experience_continuity',
  'experiment_set',
  'surveys',
  'features',
  'rollback_conditions',
  'performed_rollback',
  'can_edit',
  'tags',
  'usage_dashboard',
  'analytics_dashboards',
  'has_enriched_analytics',
  'user_access_level',
  'creation_context',
];

const boolean = (pct: number | null = 100, properties: unknown[] = []) => ({ groups: [{ properties, rollout_percentage: pct }] });
const multivariate = (variants: [string, number][]) => ({
  groups: [{ properties: [], rollout_percentage: 100 }],
  multivariate: { variants: variants.map(([key, rollout_percentage]) => ({ key, rollout_percentage })) },
});

describe('feature flags management API', () => {
  let f: FlagFixture;
  const auth = bearer(ADMIN_KEY);
  const create = (body: Record<string, unknown>, key = ADMIN_KEY) => request(f.app).post(`${FLAGS}/`).set(bearer(key)).send(body);

  beforeAll(async () => {
    f = await createFlagFixture('flags_api', () => NOW);
    await f.addKey('phx_flag_read', ['feature_flag:read']);
    await f.addKey('phx_flag_write', ['feature_flag:write']);
    await f.addKey('phx_activity', ['activity_log:read']);
    await f.addKey('phx_insight', ['insight:read']);
  });
  afterAll(() => f.close());

  describe('create', () => {
    it('creates a flag with every interface field, a usage dashboard, version 1, and tells flag evaluation', async () => {
      const before = f.flagChanges.length;
      const res = await create({ key: 'new-checkout', name: 'New checkout', filters: boolean(50), tags: ['web'] });
      expect(res.status).toBe(201);
      for (const field of INTERFACE_FIELDS) expect(res.body).toHaveProperty(field);
      expect(Object.keys(res.body.created_by).sort()).toEqual([...USER_FIELDS].sort());
      expect(res.body).toMatchObject({
        key: 'new-checkout',
        name: 'New checkout',
        active: true,
        deleted: false,
        version: 1,
        is_simple_flag: true,
        rollout_percentage: 50,
        experiment_set: [],
        surveys: [],
        features: [],
        rollback_conditions: null,
        performed_rollback: false,
        can_edit: true,
        tags: ['web'],
        analytics_dashboards: [],
        has_enriched_analytics: false,
        user_access_level: 'manager',
        creation_context: 'feature_flags',
        status: 'ACTIVE',
        created_by: { id: f.adminUserId, email: 'admin@sightline.local' },
        created_at: new Date(res.body.created_at).toISOString(),
      });
      expect(res.body.usage_dashboard).toEqual(expect.any(Number));
      expect(f.flagChanges.slice(before)).toEqual([1]);
      const stored = await f.db.query<{ filters: unknown }>('SELECT filters FROM feature_flags WHERE id = $1', [res.body.id]);
      expect(stored[0]!.filters).toEqual(boolean(50));
    });

    it('stores JSON-object payloads as JSON text and keeps creation_context', async () => {
      const res = await create({
        key: 'with-payload',
        filters: {
          ...multivariate([
            ['a', 50],
            ['b', 50],
          ]),
          payloads: { a: { color: 'red' }, b: '"blue"' },
        },
        creation_context: 'experiments',
        _should_create_usage_dashboard: false,
      });
      expect(res.status).toBe(201);
      expect(res.body.filters.payloads).toEqual({ a: '{"color":"red"}', b: '"blue"' });
      expect(res.body).toMatchObject({ creation_context: 'experiments', usage_dashboard: null, is_simple_flag: true, rollout_percentage: 100 });
    });

    it.each([
      ['no key', { name: 'x' }, 'required', 'key', 'This field is required.'],
      ['a blank key', { key: '' }, 'blank', 'key', 'This field may not be blank.'],
      ['a key with spaces', { key: 'my flag', filters: boolean() }, 'invalid_key', 'key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.'],
      ['a duplicate key', { key: 'new-checkout', filters: boolean() }, 'unique', 'key', 'There is already a feature flag with this key.'],
      ['filters that are not an object', { key: 'k1', filters: [] }, 'not_a_dict', 'filters', 'Expected a dictionary of items but got type "list".'],
      ['no condition set', { key: 'k2', filters: { groups: [] } }, 'invalid', 'filters', 'Feature flags must have at least one condition set (group).'],
      [
        'variants not summing to 100',
        {
          key: 'k3',
          filters: multivariate([
            ['a', 50],
            ['b', 40],
          ]),
        },
        'invalid_input',
        'filters',
        'Invalid variant definitions: Variant rollout percentages must sum to 100.',
      ],
      [
        'a rollout over 100',
        { key: 'k4', filters: boolean(150) },
        'invalid_input',
        'filters',
        'Invalid condition rollout percentage: must be a number between 0 and 100.',
      ],
      [
        'a payload key that is no variant',
        { key: 'k5', filters: { ...multivariate([['a', 100]]), payloads: { z: '1' } } },
        'invalid',
        'filters',
        'Payload keys must match a variant key for multivariate flags',
      ],
      [
        'a boolean payload key other than true',
        { key: 'k6', filters: { ...boolean(), payloads: { false: '1' } } },
        'invalid',
        'filters',
        "Payload keys must be 'true' for boolean flags",
      ],
      [
        'a payload that is not JSON',
        { key: 'k7', filters: { ...boolean(), payloads: { true: '{nope' } } },
        'invalid',
        'filters',
        'Payload value is not valid JSON',
      ],
      [
        'event properties on a person flag',
        { key: 'k8', filters: boolean(100, [{ key: '$browser', value: 'Chrome', type: 'event' }]) },
        'invalid',
        'filters',
        'Filters are not valid (can only use person, cohort, and flag properties)',
      ],
      [
        'person properties on a group flag',
        { key: 'k9', filters: { ...boolean(100, [{ key: 'plan', value: 'pro', type: 'person' }]), aggregation_group_type_index: 0 } },
        'invalid',
        'filters',
        'Filters are not valid (can only use group properties)',
      ],
      [
        'an unknown cohort',
        { key: 'k10', filters: boolean(100, [{ key: 'id', value: 999, type: 'cohort' }]) },
        'cohort_does_not_exist',
        'filters',
        'Cohort with id 999 does not exist',
      ],
      [
        'a variant override that does not exist',
        { key: 'k11', filters: { ...multivariate([['a', 100]]), groups: [{ properties: [], variant: 'z' }] } },
        'invalid',
        'filters',
        'Filters are not valid (variant override does not exist)',
      ],
      [
        'a bad date',
        { key: 'k12', filters: boolean(100, [{ key: 'at', value: 'someday', type: 'person', operator: 'is_date_before' }]) },
        'invalid_date',
        'filters',
        'Invalid date value: someday',
      ],
      [
        'a non-string regex',
        { key: 'k13', filters: boolean(100, [{ key: 'n', value: 5, type: 'person', operator: 'regex' }]) },
        'invalid_value',
        'filters',
        'Invalid value for operator regex: 5',
      ],
      [
        'an unknown creation_context',
        { key: 'k14', filters: boolean(), creation_context: 'nowhere' },
        'invalid_choice',
        'creation_context',
        '"nowhere" is not a valid choice.',
      ],
      ['a non-boolean active', { key: 'k15', filters: boolean(), active: 'maybe' }, 'invalid', 'active', 'Must be a valid boolean.'],
      [
        'an unknown analytics dashboard',
        { key: 'k16', filters: boolean(), analytics_dashboards: [12345] },
        'does_not_exist',
        'analytics_dashboards',
        'Invalid pk "12345" - object does not exist.',
      ],
    ])('answers %s with PostHog’s 400 body', async (_case, body, code, attr, detail) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ type: 'validation_error', code, detail, attr });
    });

    it('answers a body that is not an object with a non-field error', async () => {
      const res = await request(f.app)
        .post(`${FLAGS}/`)
        .set(auth)
        .send([{ key: 'x' }]);
      expect(res.body).toEqual({ type: 'validation_error', code: 'invalid', detail: 'Invalid data. Expected a dictionary, but got list.', attr: null });
      const malformed = await request(f.app).post(`${FLAGS}/`).set(auth).set('Content-Type', 'application/json').send('{"key":');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ type: 'validation_error', code: 'parse_error' });
    });

    it('refuses a flag depending on itself or on a missing flag', async () => {
      const dependsOnMissing = await create({
        key: 'dep-a',
        filters: boolean(100, [{ key: '9999', type: 'flag', value: true, operator: 'flag_evaluates_to' }]),
      });
      expect(dependsOnMissing.body).toMatchObject({ attr: 'filters', detail: 'Flag dependency references non-existent flag with ID 9999' });
      const base = await create({ key: 'dep-base', filters: boolean() });
      const dependent = await create({
        key: 'dep-b',
        filters: boolean(100, [{ key: String(base.body.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }]),
      });
      expect(dependent.status).toBe(201);
      const cycle = await request(f.app)
        .patch(`${FLAGS}/${base.body.id}/`)
        .set(auth)
        .send({ filters: boolean(100, [{ key: String(dependent.body.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }]) });
      expect(cycle.status).toBe(400);
      expect(cycle.body.detail).toBe('Circular dependency detected: dep-base → dep-b → dep-base');
    });

    it('lets a key be used again once its flag is soft-deleted', async () => {
      const first = await create({ key: 'reusable', filters: boolean() });
      await request(f.app).patch(`${FLAGS}/${first.body.id}/`).set(auth).send({ deleted: true }).expect(200);
      const second = await create({ key: 'reusable', filters: boolean() });
      expect(second.status).toBe(201);
      // Restoring the first now collides with the live flag: 400, not a database error.
      const restore = await request(f.app).patch(`${FLAGS}/${first.body.id}/`).set(auth).send({ deleted: false });
      expect(restore.status).toBe(400);
      expect(restore.body).toEqual({ type: 'validation_error', code: 'unique', detail: 'There is already a feature flag with this key.', attr: 'key' });
    });
  });

  describe('list', () => {
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      await f.db.query('DELETE FROM feature_flag_dashboards');
      for (const body of [
        { key: 'list-on', name: 'Landing Page Test', filters: boolean(30) },
        { key: 'list-off', name: 'dark mode', filters: boolean(), active: false },
        {
          key: 'list-variants',
          name: 'pricing',
          filters: multivariate([
            ['control', 50],
            ['test', 50],
          ]),
        },
        { key: 'list-stale', name: 'old', filters: boolean(100) },
        { key: 'list-stale-variant', name: 'old variant', filters: multivariate([['only', 100]]) },
        { key: 'list-deleted', name: 'gone', filters: boolean() },
      ]) {
        const res = await create({ ...body, _should_create_usage_dashboard: false });
        expect(res.status).toBe(201);
        ids[body.key] = res.body.id;
      }
      await f.db.query("UPDATE feature_flags SET created_at = $1 WHERE key LIKE 'list-stale%'", [new Date(NOW - 400 * DAY)]);
      await request(f.app).patch(`${FLAGS}/${ids['list-deleted']}/`).set(auth).send({ deleted: true }).expect(200);
      await f.db.query("INSERT INTO experiments (team_id, name, feature_flag_id) VALUES (1, 'Pricing experiment', $1)", [ids['list-variants']]);
    });

    const keys = async (query: Record<string, string>, prefix = FLAGS) => {
      const res = await request(f.app).get(`${prefix}/`).query(query).set(bearer('phx_flag_read'));
      expect(res.status).toBe(200);
      return (res.body.results as { key: string }[]).map((r) => r.key).filter((k) => k.startsWith('list-'));
    };

    it('excludes soft-deleted flags and orders newest first', async () => {
      const all = await keys({ search: 'list-' });
      expect(all).toEqual(['list-variants', 'list-off', 'list-on', 'list-stale-variant', 'list-stale']);
    });
    it('filters by active, including STALE', async () => {
      expect(await keys({ active: 'false' })).toEqual(['list-off']);
      expect(await keys({ active: 'true', search: 'list-' })).not.toContain('list-off');
      expect(await keys({ active: 'STALE' })).toEqual(['list-stale-variant', 'list-stale']);
    });
    it('searches key and name case-insensitively, and experiment names', async () => {
      expect(await keys({ search: 'LANDING' })).toEqual(['list-on']);
      expect(await keys({ search: 'LIST-OF' })).toEqual(['list-off']);
      expect(await keys({ search: 'pricing experiment' })).toEqual(['list-variants']);
    });
    it('filters by type and creator', async () => {
      expect(await keys({ type: 'multivariant' })).toEqual(['list-variants', 'list-stale-variant']);
      expect(await keys({ type: 'boolean', search: 'list-' })).toEqual(['list-off', 'list-on', 'list-stale']);
      expect(await keys({ type: 'experiment' })).toEqual(['list-variants']);
      expect(await keys({ created_by_id: String(f.adminUserId), search: 'list-on' })).toEqual(['list-on']);
      expect(await keys({ created_by_id: '987654', search: 'list-' })).toEqual([]);
    });
    it('pages with limit/offset and absolute next/previous links, on both prefixes', async () => {
      const first = await request(f.app).get(`${FLAGS}/`).query({ search: 'list-', limit: '2' }).set(auth);
      expect(first.body).toMatchObject({ count: 5, previous: null });
      expect(first.body.results).toHaveLength(2);
      const next = new URL(first.body.next);
      expect(next.protocol).toBe('http:');
      expect(Object.fromEntries(next.searchParams)).toEqual({ search: 'list-', limit: '2', offset: '2' });
      const second = await request(f.app).get(`${next.pathname}${next.search}`).set(auth);
      expect(first.body.results.map((r: { key: string }) => r.key)).toEqual(['list-variants', 'list-off']);
      expect(second.body.results.map((r: { key: string }) => r.key)).toEqual(['list-on', 'list-stale-variant']);
      expect(Object.fromEntries(new URL(second.body.previous).searchParams)).toEqual({ search: 'list-', limit: '2' });
      const last = await request(f.app).get('/api/environments/1/feature_flags/').query({ search: 'list-', limit: '2', offset: '4' }).set(auth);
      expect(last.body).toMatchObject({ count: 5, next: null });
      expect(last.body.results.map((r: { key: string }) => r.key)).toEqual(['list-stale']);
    });
    it('filters by tags and excluded keys, and orders by a field', async () => {
      await request(f.app)
        .patch(`${FLAGS}/${ids['list-off']}/`)
        .set(auth)
        .send({ tags: ['mobile', 'beta'] });
      expect(await keys({ tags: JSON.stringify(['beta']) })).toEqual(['list-off']);
      expect(await keys({ search: 'list-', excluded_properties: JSON.stringify(['list-on', 'list-off']) })).toEqual([
        'list-variants',
        'list-stale-variant',
        'list-stale',
      ]);
      expect(await keys({ search: 'list-', order: 'key' })).toEqual(['list-off', 'list-on', 'list-stale', 'list-stale-variant', 'list-variants']);
      expect(await keys({ search: 'list-', order: '-key' })).toEqual(['list-variants', 'list-stale-variant', 'list-stale', 'list-on', 'list-off']);
    });
    it('shows linked experiments in experiment_set', async () => {
      const res = await request(f.app).get(`${FLAGS}/${ids['list-variants']}/`).set(auth);
      expect(res.body.experiment_set).toEqual([expect.any(Number)]);
    });
  });

  describe('retrieve, update, soft delete', () => {
    let id: number;
    beforeAll(async () => {
      id = (await create({ key: 'edit-me', name: 'Edit me', filters: boolean(10) })).body.id;
    });

    it('retrieves a flag, and 404s for unknown ids and other projects’ flags', async () => {
      const res = await request(f.app).get(`${FLAGS}/${id}/`).set(bearer('phx_flag_read'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id, key: 'edit-me' });
      expect((await request(f.app).get(`${FLAGS}/99999/`).set(auth)).status).toBe(404);
      expect((await request(f.app).get(`${FLAGS}/abc/`).set(auth)).body).toEqual({
        type: 'invalid_request',
        code: 'not_found',
        detail: 'Not found.',
        attr: null,
      });
    });

    it('keeps projects apart: keys are unique per project and another project’s flag is not found here', async () => {
      const [project] = await f.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'second', 'phc_second_flags') RETURNING id",
        [f.organizationId],
      );
      const theirs = await request(f.app).post(`/api/projects/${project!.id}/feature_flags/`).set(auth).send({ key: 'edit-me' });
      expect(theirs.status).toBe(201);
      expect((await request(f.app).get(`${FLAGS}/${theirs.body.id}/`).set(auth)).status).toBe(404);
      expect((await request(f.app).patch(`${FLAGS}/${theirs.body.id}/`).set(auth).send({ name: 'x' })).status).toBe(404);
      expect((await request(f.app).get(`/api/environments/${project!.id}/feature_flags/${theirs.body.id}/`).set(auth)).body.key).toBe('edit-me');
      expect(f.flagChanges.at(-1)).toBe(project!.id);
    });

    it('increments the version on every write and records a field-level diff', async () => {
      const before = f.flagChanges.length;
      const res = await request(f.app)
        .patch(`${FLAGS}/${id}/`)
        .set(auth)
        .send({ name: 'Edited', filters: boolean(20) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ version: 2, name: 'Edited', rollout_percentage: 20, last_modified_by: { id: f.adminUserId } });
      expect(f.flagChanges.slice(before)).toEqual([1]);
      const again = await request(f.app).patch(`${FLAGS}/${id}/`).set(auth).send({ active: false });
      expect(again.body.version).toBe(3);
    });

    it('accepts PUT as DRF’s full update: the key is required', async () => {
      const missing = await request(f.app).put(`${FLAGS}/${id}/`).set(auth).send({ name: 'Put' });
      expect(missing.body).toEqual({ type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'key' });
      const put = await request(f.app).put(`${FLAGS}/${id}/`).set(auth).send({ key: 'edit-me', name: 'Put' });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ key: 'edit-me', name: 'Put', rollout_percentage: 20 });
    });

    it('keeps the stored filters when a PATCH sends filters without groups', async () => {
      const res = await request(f.app).patch(`${FLAGS}/${id}/`).set(auth).send({ filters: {} });
      expect(res.status).toBe(200);
      expect(res.body.filters.groups[0].rollout_percentage).toBe(20);
    });

    it('answers a stale version with 409, unless original_flag shows no conflicting change', async () => {
      const current = (await request(f.app).get(`${FLAGS}/${id}/`).set(auth)).body;
      const stale = await request(f.app)
        .patch(`${FLAGS}/${id}/`)
        .set(auth)
        .send({ name: 'Mine', version: current.version - 1 });
      expect(stale.status).toBe(409);
      expect(stale.body).toEqual({
        type: 'invalid_request',
        code: 'conflict',
        detail: 'The feature flag was updated by admin@sightline.local since you started editing it. Please refresh and try again.',
        attr: null,
      });
      // The client changed `name`; meanwhile nobody else changed it: PostHog lets that through.
      const merged = await request(f.app)
        .patch(`${FLAGS}/${id}/`)
        .set(auth)
        .send({ name: 'Mine', version: current.version - 1, original_flag: { ...current, name: current.name } });
      expect(merged.status).toBe(200);
      expect(merged.body).toMatchObject({ name: 'Mine', version: current.version + 1 });
      const fresh = await request(f.app).patch(`${FLAGS}/${id}/`).set(auth).send({ name: 'Fresh', version: merged.body.version });
      expect(fresh.status).toBe(200);
    });

    it('soft-deletes with PATCH deleted: true (still retrievable, gone from the list) and restores', async () => {
      const before = f.flagChanges.length;
      const res = await request(f.app).patch(`${FLAGS}/${id}/`).set(bearer('phx_flag_write')).send({ deleted: true });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ deleted: true, status: 'DELETED' });
      expect(f.flagChanges.slice(before)).toEqual([1]);
      expect((await request(f.app).get(`${FLAGS}/${id}/`).set(auth)).body.deleted).toBe(true);
      const listed = await request(f.app).get(`${FLAGS}/`).query({ search: 'edit-me' }).set(auth);
      expect(listed.body.count).toBe(0);
      const restored = await request(f.app).patch(`${FLAGS}/${id}/`).set(auth).send({ deleted: false });
      expect(restored.body.deleted).toBe(false);
    });

    it('refuses to delete or disable a flag others depend on, and to delete one an experiment uses', async () => {
      const base = (await create({ key: 'needed', filters: boolean() })).body.id;
      const user = await create({ key: 'needs', filters: boolean(100, [{ key: String(base), type: 'flag', value: true, operator: 'flag_evaluates_to' }]) });
      const del = await request(f.app).patch(`${FLAGS}/${base}/`).set(auth).send({ deleted: true });
      expect(del.status).toBe(400);
      expect(del.body).toEqual({
        type: 'validation_error',
        code: 'invalid',
        detail: `Cannot delete this feature flag because other flags depend on it: needs (ID: ${user.body.id}). Please update or delete the dependent flags first.`,
        attr: null,
      });
      const off = await request(f.app).patch(`${FLAGS}/${base}/`).set(auth).send({ active: false });
      expect(off.body.detail).toMatch(/^Cannot disable this feature flag because other flags depend on it/);
      const [experiment] = await f.db.query<{ id: number }>("INSERT INTO experiments (team_id, name, feature_flag_id) VALUES (1, 'e', $1) RETURNING id", [
        user.body.id,
      ]);
      const delExperimentFlag = await request(f.app).patch(`${FLAGS}/${user.body.id}/`).set(auth).send({ deleted: true });
      expect(delExperimentFlag.body.detail).toBe(
        `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experiment!.id}. Please delete the experiment(s) before deleting the flag.`,
      );
    });

    it('refuses DELETE with 405 and says to PATCH deleted, after checking the scope', async () => {
      const res = await request(f.app).delete(`${FLAGS}/${id}/`).set(auth);
      expect(res.status).toBe(405);
      expect(res.body).toEqual({
        type: 'invalid_request',
        code: 'method_not_allowed',
        detail: 'Hard delete of this model is not allowed. Use a patch API call to set "deleted" to true',
        attr: null,
      });
      const readOnly = await request(f.app).delete(`${FLAGS}/${id}/`).set(bearer('phx_flag_read'));
      expect(readOnly.status).toBe(403);
      expect((await f.db.query('SELECT 1 FROM feature_flags WHERE id = $1', [id])).length).toBe(1);
    });
  });

  describe('activity', () => {
    let id: number;
    beforeAll(async () => {
      id = (await create({ key: 'audited', name: 'Audited', filters: boolean(10) })).body.id;
      await request(f.app)
        .patch(`${FLAGS}/${id}/`)
        .set(auth)
        .send({ name: 'Audited v2', filters: boolean(40) });
      await request(f.app).patch(`${FLAGS}/${id}/`).set(auth).send({ deleted: true });
    });

    it('records create, update and delete with who, when and which fields changed', async () => {
      const res = await request(f.app).get(`${FLAGS}/${id}/activity/`).set(bearer('phx_activity'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total_count: 3, next: null, previous: null });
      const [deleted, updated, created] = res.body.results;
      expect(deleted).toMatchObject({
        activity: 'deleted',
        scope: 'FeatureFlag',
        item_id: String(id),
        user: { first_name: 'Admin', email: 'admin@sightline.local' },
        is_system: false,
        unread: false,
        detail: { name: 'audited', changes: [{ type: 'FeatureFlag', action: 'changed', field: 'deleted', before: false, after: true }] },
      });
      expect(updated.activity).toBe('updated');
      expect(updated.detail.changes).toEqual([
        { type: 'FeatureFlag', action: 'changed', field: 'name', before: 'Audited', after: 'Audited v2' },
        { type: 'FeatureFlag', action: 'changed', field: 'filters', before: boolean(10), after: boolean(40) },
      ]);
      expect(created.activity).toBe('created');
      expect(created.detail.changes).toEqual(
        expect.arrayContaining([{ type: 'FeatureFlag', action: 'created', field: 'key', before: null, after: 'audited' }]),
      );
      expect(Date.parse(created.created_at)).toBeLessThanOrEqual(Date.parse(deleted.created_at));
      expect(Object.keys(created).sort()).toEqual(['activity', 'created_at', 'detail', 'id', 'is_system', 'item_id', 'scope', 'unread', 'user']);
    });

    it('pages all flags’ activity with 1-based pages and absolute links', async () => {
      const res = await request(f.app).get(`${FLAGS}/activity/`).query({ limit: '2' }).set(auth);
      expect(res.status).toBe(200);
      expect(res.body.results).toHaveLength(2);
      expect(res.body.total_count).toBeGreaterThan(3);
      expect(Object.fromEntries(new URL(res.body.next).searchParams)).toEqual({ limit: '2', page: '2' });
      const page2 = await request(f.app).get(`${FLAGS}/activity/`).query({ limit: '2', page: '2' }).set(auth);
      expect(Object.fromEntries(new URL(page2.body.previous).searchParams)).toEqual({ limit: '2', page: '1' });
      const bad = await request(f.app).get(`${FLAGS}/activity/`).query({ limit: '0' }).set(auth);
      expect(bad.body).toEqual({ type: 'validation_error', code: 'min_value', detail: 'Ensure this value is greater than or equal to 1.', attr: 'limit' });
    });

    it('404s for the activity of an unknown flag', async () => {
      expect((await request(f.app).get(`${FLAGS}/424242/activity/`).set(auth)).status).toBe(404);
    });
  });

  describe('status', () => {
    it('is active, stale when fully rolled out for over 30 days, deleted, or unknown (404)', async () => {
      const partial = (await create({ key: 'st-partial', filters: boolean(50) })).body.id;
      const full = (await create({ key: 'st-full', filters: boolean(100) })).body.id;
      const variant = (
        await create({
          key: 'st-variant',
          filters: multivariate([
            ['a', 0],
            ['b', 100],
          ]),
        })
      ).body.id;
      const gone = (await create({ key: 'st-gone', filters: boolean() })).body.id;
      await f.db.query("UPDATE feature_flags SET created_at = $1 WHERE key LIKE 'st-%'", [new Date(NOW - 40 * DAY)]);
      await request(f.app).patch(`${FLAGS}/${gone}/`).set(auth).send({ deleted: true });
      const status = async (id: number) => {
        const res = await request(f.app).get(`${FLAGS}/${id}/status/`).set(bearer('phx_flag_read'));
        return [res.status, res.body];
      };
      expect(await status(partial)).toEqual([200, { status: 'active', reason: 'Flag is not fully rolled out and may still be active' }]);
      expect(await status(full)).toEqual([200, { status: 'stale', reason: 'This boolean flag will always evaluate to "true"' }]);
      expect(await status(variant)).toEqual([200, { status: 'stale', reason: 'This flag will always use the variant "b"' }]);
      expect(await status(gone)).toEqual([200, { status: 'deleted', reason: 'Flag has been deleted' }]);
      expect(await status(777777)).toEqual([404, { status: 'unknown', reason: 'Flag could not be found' }]);
      const fresh = (await create({ key: 'st-fresh', filters: boolean(100) })).body.id;
      expect((await status(fresh))[1]).toMatchObject({ status: 'active' });
    });
  });

  describe('scopes and authentication', () => {
    let id: number;
    beforeAll(async () => {
      id = (await create({ key: 'scoped', filters: boolean() })).body.id;
    });
    const cases: [string, string, string, string][] = [
      ['GET', FLAGS + '/', 'phx_insight', 'feature_flag:read'],
      ['POST', FLAGS + '/', 'phx_flag_read', 'feature_flag:write'],
      ['GET', `${FLAGS}/{id}/`, 'phx_insight', 'feature_flag:read'],
      ['PATCH', `${FLAGS}/{id}/`, 'phx_flag_read', 'feature_flag:write'],
      ['DELETE', `${FLAGS}/{id}/`, 'phx_flag_read', 'feature_flag:write'],
      ['GET', `${FLAGS}/{id}/status/`, 'phx_insight', 'feature_flag:read'],
      ['GET', `${FLAGS}/{id}/activity/`, 'phx_flag_write', 'activity_log:read'],
      ['GET', `${FLAGS}/activity/`, 'phx_flag_read', 'activity_log:read'],
      ['GET', `${FLAGS}/{id}/role_access/`, 'phx_insight', 'feature_flag:read'],
      ['POST', `${FLAGS}/{id}/role_access/`, 'phx_flag_read', 'feature_flag:write'],
      ['GET', `${FLAGS}/{id}/access_controls/`, 'phx_flag_write', 'access_control:read'],
      ['GET', `${FLAGS}/{id}/global_access_controls/`, 'phx_flag_write', 'access_control:read'],
      ['POST', `${FLAGS}/{id}/dashboard/`, 'phx_flag_read', 'feature_flag:write'],
      ['POST', `${FLAGS}/{id}/enrich_usage_dashboard/`, 'phx_flag_read', 'feature_flag:write'],
      ['POST', `${FLAGS}/{id}/create_static_cohort_for_flag/`, 'phx_flag_read', 'feature_flag:write'],
      ['GET', '/api/organizations/@current/roles/', 'phx_flag_write', 'organization:read'],
      ['POST', '/api/organizations/@current/roles/', 'phx_flag_write', 'organization:write'],
    ];
    it.each(cases)('%s %s needs %s → 403 for a key with only another scope', async (method, path, key, scope) => {
      const res = await request(f.app)
        [method.toLowerCase() as 'get'](path.replace('{id}', String(id)))
        .set(bearer(key))
        .send({});
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ type: 'authentication_error', code: 'permission_denied', detail: `API key missing required scope '${scope}'`, attr: null });
    });
    it('answers missing and unknown keys with 401, other organisations’ projects with 403', async () => {
      expect((await request(f.app).get(`${FLAGS}/`)).body).toMatchObject({ code: 'not_authenticated' });
      expect((await request(f.app).get(`${FLAGS}/`).set(bearer('phx_nope'))).body).toMatchObject({ code: 'authentication_failed' });
      const [org] = await f.db.query<{ id: string }>("INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), 'other') RETURNING id");
      const [project] = await f.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'theirs', 'phc_theirs_flags') RETURNING id",
        [org!.id],
      );
      const res = await request(f.app).get(`/api/projects/${project!.id}/feature_flags/`).set(auth);
      expect(res.status).toBe(403);
    });
  });
});
