/**
 * Groups and group types read back as PostHog answers them: ee/clickhouse/views/test/test_clickhouse_groups.py
 * (GroupsViewSetTestCase, GroupsTypesViewSetTestCase, TestListGroupsFunction, TestGroupsListAPIContract)
 * on the rows the worker writes (PostgreSQL `groups` and `group_type_mappings`, ClickHouse `groups`).
 */
import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createTestGroup, createTestPerson, insertGroupType, testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2021-05-10T00:00:00Z');
const admin = bearer(ADMIN_KEY);

describe('groups and group types API', () => {
  let f: FlagFixture;
  let other: number;
  const get = (path: string) => request(f.app).get(path).set(admin);
  const listOf = async (query: string, teamId = 1) => {
    const res = await get(`/api/projects/${teamId}/groups/?${query}`);
    expect(res.status).toBe(200);
    return res.body as { next: string | null; previous: null; results: { group_key: string; group_properties: Record<string, unknown> }[] };
  };
  const keysOf = async (query: string) => (await listOf(query)).results.map((g) => g.group_key);

  beforeAll(async () => {
    f = await createFlagFixture('groups-api', () => NOW);
    const created = await request(f.app).post('/api/projects/').set(admin).send({ name: 'other project' });
    other = created.body.id as number;
    await insertGroupType(f.db, 1, 'organization', 0);
    await insertGroupType(f.db, 1, 'playlist', 1);
    await insertGroupType(f.db, 1, 'another', 2);
    await insertGroupType(f.db, other, 'organization', 0);
    await createTestGroup(f, {
      groupTypeIndex: 0,
      groupKey: 'org:5',
      properties: { industry: 'finance', name: 'Mr. Krabs' },
      createdAt: '2021-05-01 00:00:00',
    });
    await createTestGroup(f, { groupTypeIndex: 0, groupKey: 'org:6', properties: { industry: 'technology' }, createdAt: '2021-05-02 00:00:00' });
    await createTestGroup(f, { groupTypeIndex: 0, groupKey: 'org:7', properties: { industry: 'finance-technology' }, createdAt: '2021-04-01 00:00:00' });
    await createTestGroup(f, {
      groupTypeIndex: 1,
      groupKey: 'company:1',
      properties: { name: 'Plankton', industry: 'finance' },
      createdAt: '2021-05-02 00:00:00',
    });
    await createTestGroup(f, { groupTypeIndex: 1, groupKey: 'company:2', properties: {}, createdAt: '2021-05-02 00:00:00' });
    await createTestGroup(f, { teamId: other, groupTypeIndex: 0, groupKey: 'org:5', properties: { name: 'OTHER PROJECT' }, createdAt: '2021-05-03 00:00:00' });
  });
  afterAll(() => f.close());

  describe('groups_types', () => {
    const type = (
      index: number,
      groupType: string,
      names: { name_singular?: string | null; name_plural?: string | null; default_columns?: string[] } = {},
    ) => ({
      group_type_index: index,
      group_type: groupType,
      name_singular: null,
      name_plural: null,
      detail_dashboard: null,
      default_columns: null,
      created_at: expect.any(String),
      ...names,
    });

    it('lists the types by index, under both prefixes', async () => {
      for (const prefix of ['projects', 'environments']) {
        const res = await get(`/api/${prefix}/1/groups_types/`);
        expect([res.status, res.body]).toEqual([200, [type(0, 'organization'), type(1, 'playlist'), type(2, 'another')]]);
      }
      expect((await get(`/api/projects/${other}/groups_types/`)).body).toEqual([type(0, 'organization')]);
    });

    it('renames types with update_metadata, leaving group_type alone, and answers every type', async () => {
      const res = await request(f.app)
        .patch('/api/projects/1/groups_types/update_metadata/')
        .set(admin)
        .send([
          { group_type_index: 0, name_singular: 'organization!' },
          { group_type_index: 1, group_type: 'rename attempt', name_plural: 'playlists' },
        ]);
      expect([res.status, res.body]).toEqual([
        200,
        [type(0, 'organization', { name_singular: 'organization!' }), type(1, 'playlist', { name_plural: 'playlists' }), type(2, 'another')],
      ]);
      // The other project's type of the same index is untouched.
      expect((await get(`/api/projects/${other}/groups_types/`)).body).toEqual([type(0, 'organization')]);
      const cleared = await request(f.app)
        .patch('/api/projects/1/groups_types/update_metadata/')
        .set(admin)
        .send([{ group_type_index: 0, name_singular: null }]);
      expect(cleared.body[0]).toEqual(type(0, 'organization'));
    });

    it('refuses what update_metadata cannot apply, and applies none of it', async () => {
      const patch = (body: unknown) =>
        request(f.app)
          .patch('/api/projects/1/groups_types/update_metadata/')
          .set(admin)
          .send(body as object);
      const unknown = await patch([
        { group_type_index: 2, name_singular: 'not applied' },
        { group_type_index: 4, name_singular: 'nobody' },
      ]);
      expect([unknown.status, unknown.body]).toEqual([404, { type: 'invalid_request', code: 'not_found', detail: 'Group type not found', attr: null }]);
      expect((await get('/api/projects/1/groups_types/')).body[2]).toEqual(type(2, 'another'));
      expect((await patch({ group_type_index: 0 })).body).toMatchObject({ code: 'not_a_list', attr: null });
      expect((await patch([{ name_singular: 'x' }])).body).toMatchObject({ code: 'required', attr: '0__group_type_index' });
      expect((await patch([{ group_type_index: 9 }])).body).toMatchObject({ code: 'max_value', attr: '0__group_type_index' });
      expect((await patch([{ group_type_index: 0, name_plural: 'x'.repeat(401) }])).body).toMatchObject({ code: 'max_length', attr: '0__name_plural' });
      expect((await patch([{ group_type_index: 0, name_plural: { a: 1 } }])).body).toMatchObject({ code: 'invalid', attr: '0__name_plural' });
    });

    it('sets the default columns of a type', async () => {
      const put = (body: unknown) =>
        request(f.app)
          .put('/api/environments/1/groups_types/set_default_columns/')
          .set(admin)
          .send(body as object);
      const res = await put({ group_type_index: 1, default_columns: ['name', 'industry'] });
      expect([res.status, res.body]).toEqual([200, type(1, 'playlist', { name_plural: 'playlists', default_columns: ['name', 'industry'] })]);
      expect((await get('/api/projects/1/groups_types/')).body[1].default_columns).toEqual(['name', 'industry']);
      const missing = await put({ group_type_index: 3, default_columns: [] });
      expect([missing.status, missing.body.detail]).toEqual([404, 'Group type not found']);
      expect((await put({ group_type_index: 1, default_columns: 'name' })).body).toMatchObject({ code: 'not_a_list', attr: 'default_columns' });
    });
  });

  describe('groups list', () => {
    it('lists a type newest first, with search over properties and exact keys', async () => {
      const page = await listOf('group_type_index=0');
      expect(page).toEqual({
        next: null,
        previous: null,
        results: [
          { group_type_index: 0, group_key: 'org:6', group_properties: { industry: 'technology' }, created_at: '2021-05-02T00:00:00.000Z' },
          { group_type_index: 0, group_key: 'org:5', group_properties: { industry: 'finance', name: 'Mr. Krabs' }, created_at: '2021-05-01T00:00:00.000Z' },
          { group_type_index: 0, group_key: 'org:7', group_properties: { industry: 'finance-technology' }, created_at: '2021-04-01T00:00:00.000Z' },
        ],
      });
      expect(await keysOf('group_type_index=0&search=krabs')).toEqual(['org:5']);
      expect(await keysOf('group_type_index=0&search=ORG:5')).toEqual(['org:5']);
      // A key is matched whole, not in part (PostHog's group_key__iexact).
      expect(await keysOf('group_type_index=0&search=org:')).toEqual([]);
      expect(await keysOf('group_type_index=0&group_key=RG:6')).toEqual(['org:6']);
      expect(await keysOf('group_type_index=1')).toEqual(['company:2', 'company:1']);
      // The other project's org:5 is never listed here, nor ours there.
      expect((await listOf('group_type_index=0', other)).results).toEqual([
        expect.objectContaining({ group_key: 'org:5', group_properties: { name: 'OTHER PROJECT' } }),
      ]);
    });

    it('filters by group properties of the listed type', async () => {
      const filter = (filters: unknown) => `group_type_index=0&properties=${encodeURIComponent(JSON.stringify(filters))}`;
      expect(await keysOf(filter([{ key: 'industry', value: 'finance', operator: 'icontains', type: 'group', group_type_index: 0 }]))).toEqual([
        'org:5',
        'org:7',
      ]);
      expect(
        await keysOf(
          filter({
            type: 'OR',
            values: [
              { key: 'name', operator: 'is_set', type: 'group', group_type_index: 0 },
              { key: 'industry', value: ['technology'], type: 'group', group_type_index: 0 },
            ],
          }),
        ),
      ).toEqual(['org:6', 'org:5']);
      const otherType = await get(`/api/projects/1/groups/?${filter([{ key: 'name', value: 'x', type: 'group', group_type_index: 1 }])}`);
      expect([otherType.status, otherType.body.attr]).toEqual([400, 'properties']);
      const person = await get(`/api/projects/1/groups/?${filter([{ key: 'name', value: 'x', type: 'person' }])}`);
      expect([person.status, person.body.code]).toEqual([400, 'not_supported']);
    });

    it('pages forward with a cursor, breaking equal creation times on the key', async () => {
      for (const key of ['tie:a', 'tie:b', 'tie:c']) await createTestGroup(f, { groupTypeIndex: 2, groupKey: key, createdAt: '2021-05-05 00:00:00' });
      await createTestGroup(f, { groupTypeIndex: 2, groupKey: 'old', createdAt: '2020-01-01 00:00:00' });
      const seen: string[] = [];
      let next: string | null = '/api/projects/1/groups/?group_type_index=2&limit=2';
      while (next) {
        const url: URL = new URL(next, 'http://x');
        const res = await get(`${url.pathname}${url.search}`);
        expect(res.status).toBe(200);
        expect(res.body.previous).toBeNull();
        seen.push(...res.body.results.map((g: { group_key: string }) => g.group_key));
        next = res.body.next as string | null;
        if (next) expect(next).toMatch(/^http:\/\/[^/]+\/api\/projects\/1\/groups\/\?group_type_index=2&limit=2&cursor=/);
      }
      expect(seen).toEqual(['tie:c', 'tie:b', 'tie:a', 'old']);
      // PostHog's cursor format: base64url of {"c": created_at µs, "k": key}; milliseconds are read too.
      const cursor = (c: number, k: string) => Buffer.from(JSON.stringify({ c, k })).toString('base64url');
      const at = Date.parse('2021-05-05T00:00:00Z');
      expect(await keysOf(`group_type_index=2&cursor=${cursor(at * 1000, 'tie:b')}`)).toEqual(['tie:a', 'old']);
      expect(await keysOf(`group_type_index=2&cursor=${cursor(at, 'tie:b')}`)).toEqual(['tie:a', 'old']);
      // An unreadable cursor starts over, as PostHog's does.
      for (const bad of ['invalid_cursor', cursor(1e300, 'x'), Buffer.from('[1]').toString('base64url')]) {
        expect(await keysOf(`group_type_index=2&cursor=${encodeURIComponent(bad)}`)).toEqual(['tie:c', 'tie:b', 'tie:a', 'old']);
      }
    });

    it('shows the latest version of a group, and leaves deleted ones out', async () => {
      await createTestGroup(f, { groupTypeIndex: 3, groupKey: 'g', properties: { name: 'Old' }, createdAt: '2021-05-01 00:00:00' });
      await createTestGroup(f, { groupTypeIndex: 3, groupKey: 'gone', createdAt: '2021-05-01 00:00:00' });
      const copy = { group_type_index: 3, created_at: '2021-05-01 00:00:00', team_id: 1, version: 1 };
      await f.ch.insert({
        table: 'groups',
        format: 'JSONEachRow',
        values: [
          { ...copy, group_key: 'g', group_properties: JSON.stringify({ name: 'New' }) },
          { ...copy, group_key: 'gone', group_properties: '{}', is_deleted: true },
        ],
      });
      expect((await listOf('group_type_index=3')).results).toEqual([expect.objectContaining({ group_key: 'g', group_properties: { name: 'New' } })]);
    });

    it('answers bad parameters with a 400 naming them', async () => {
      const missing = await get('/api/projects/1/groups/');
      expect([missing.status, missing.body]).toEqual([
        400,
        {
          type: 'validation_error',
          code: 'required',
          attr: 'group_type_index',
          detail: 'You must pass ?group_type_index= in this URL. To get a list of valid group types, call /api/:project_id/groups_types/.',
        },
      ]);
      for (const [query, attr] of [
        ['group_type_index=abc', 'group_type_index'],
        ['group_type_index=5', 'group_type_index'],
        ['group_type_index=0&limit=0', 'limit'],
        ['group_type_index=0&properties=%7B', 'properties'],
      ] as const) {
        const res = await get(`/api/projects/1/groups/?${query}`);
        expect([query, res.status, res.body.attr]).toEqual([query, 400, attr]);
      }
    });

    it('answers the page as CSV', async () => {
      const res = await get('/api/projects/1/groups/?group_type_index=0&format=csv');
      expect(res.status).toBe(200);
      expect(res.text.split('\r\n')[0]).toBe('group_type_index,group_key,group_properties,created_at');
      expect(res.text).toContain('org:5');
    });
  });

  describe('find, property definitions and values', () => {
    it('finds a group by type and key', async () => {
      const res = await get('/api/environments/1/groups/find/?group_type_index=0&group_key=org:5');
      expect([res.status, res.body]).toEqual([
        200,
        {
          group_type_index: 0,
          group_key: 'org:5',
          group_properties: { industry: 'finance', name: 'Mr. Krabs' },
          created_at: '2021-05-01T00:00:00.000Z',
          notebook: null,
        },
      ]);
      expect((await get('/api/projects/1/groups/find/?group_type_index=1&group_key=org:5')).status).toBe(404);
      expect((await get('/api/projects/1/groups/find/?group_type_index=0&group_key=wrong_key')).status).toBe(404);
      expect((await get(`/api/projects/${other}/groups/find/?group_type_index=0&group_key=org:5`)).body.group_properties).toEqual({ name: 'OTHER PROJECT' });
      const noKey = await get('/api/projects/1/groups/find/?group_type_index=0');
      expect([noKey.status, noKey.body.attr]).toEqual([400, 'group_key']);
    });

    it('counts the groups having each property key, per type', async () => {
      const res = await get('/api/projects/1/groups/property_definitions/');
      expect(res.status).toBe(200);
      expect(res.body['0']).toEqual([
        { name: 'industry', count: 3 },
        { name: 'name', count: 1 },
      ]);
      expect(res.body['1']).toEqual([
        { name: 'industry', count: 1 },
        { name: 'name', count: 1 },
      ]);
      expect((await get(`/api/projects/${other}/groups/property_definitions/`)).body).toEqual({ '0': [{ name: 'name', count: 1 }] });
    });

    it('lists the most common values of a group property', async () => {
      const values = async (query: string) => {
        const res = await get(`/api/projects/1/groups/property_values/?${query}`);
        expect([res.status, res.body.refreshing]).toEqual([200, false]);
        return res.body.results as { name: string; count: number }[];
      };
      expect(await values('key=industry&group_type_index=0')).toEqual([
        { name: 'finance', count: 1 },
        { name: 'finance-technology', count: 1 },
        { name: 'technology', count: 1 },
      ]);
      expect(await values('key=industry&group_type_index=0&value=fin')).toEqual([
        { name: 'finance', count: 1 },
        { name: 'finance-technology', count: 1 },
      ]);
      expect((await values('key=industry&group_type_index=0&value=TECH')).map((v) => v.name)).toEqual(['finance-technology', 'technology']);
      expect(await values('key=industry&group_type_index=0&value=healthcare')).toEqual([]);
      expect(await values('key=industry&group_type_index=1&value=fin')).toEqual([{ name: 'finance', count: 1 }]);
      expect(await values('key=nothing&group_type_index=0')).toEqual([]);
      expect((await get('/api/projects/1/groups/property_values/?key=name')).status).toBe(400);
      expect((await get('/api/projects/1/groups/property_values/?group_type_index=0')).status).toBe(400);
    });
  });

  describe('related actors', () => {
    const PERSON = '01795392-cc00-0003-7dc7-67a694604d72';
    let team: number;
    beforeAll(async () => {
      const created = await request(f.app).post('/api/projects/').set(admin).send({ name: 'related' });
      team = created.body.id as number;
      await insertGroupType(f.db, team, 'organization', 0);
      await insertGroupType(f.db, team, 'playlist', 1);
      await createTestPerson(f, { teamId: team, uuid: PERSON, distinctIds: ['1', '2'], createdAt: '2021-05-10 00:00:00' });
      await createTestPerson(f, { teamId: team, distinctIds: ['3'] });
      await createTestPerson(f, { teamId: team, distinctIds: ['4'] });
      for (const [index, key] of [
        [0, '0::0'],
        [0, '0::1'],
        [1, '1::2'],
        [1, '1::3'],
        [1, '1::4'],
        [1, '1::5'],
      ] as const) {
        await createTestGroup(f, { teamId: team, groupTypeIndex: index, groupKey: key, createdAt: '2021-05-10 00:00:00' });
      }
      const event = (atMs: number, groups: Record<string, string>) =>
        testEventRow({ teamId: team, event: '$pageview', distinctId: '1', atMs, properties: groups });
      const recent = Date.parse('2021-05-05T00:00:00Z');
      const old = Date.parse('2000-05-05T00:00:00Z');
      await insertEvents(f.ch, [
        event(recent, { $group_0: '0::0', $group_1: '1::2' }),
        event(recent, { $group_0: '0::0', $group_1: '1::3' }),
        event(recent, { $group_0: '0::1', $group_1: '1::3' }),
        // Too old to relate anything.
        event(old, { $group_0: '0::0', $group_1: '1::4' }),
        // A key no group has.
        event(recent, { $group_0: '0::0', $group_1: 'no such group' }),
        // Another person's event in another group: unrelated.
        testEventRow({ teamId: team, event: '$pageview', distinctId: '3', atMs: recent, properties: { $group_0: '0::1', $group_1: '1::5' } }),
      ]);
    });

    const group = (index: number, key: string) => ({
      type: 'group',
      id: key,
      group_key: key,
      group_type_index: index,
      created_at: '2021-05-10T00:00:00.000Z',
      properties: {},
      matched_recordings: [],
      value_at_data_point: null,
    });

    it("answers a group's persons and the other types' groups", async () => {
      const res = await get(`/api/projects/${team}/groups/related/?id=0::0&group_type_index=0`);
      expect([res.status, res.body]).toEqual([
        200,
        [
          {
            type: 'person',
            id: PERSON,
            uuid: PERSON,
            name: '1',
            distinct_ids: ['1', '2'],
            properties: {},
            is_identified: false,
            created_at: '2021-05-10T00:00:00.000Z',
            last_seen_at: null,
            matched_recordings: [],
            value_at_data_point: null,
          },
          group(1, '1::2'),
          group(1, '1::3'),
        ],
      ]);
    });

    it("answers a person's groups of every type", async () => {
      const res = await get(`/api/environments/${team}/groups/related/?id=${PERSON}`);
      expect([res.status, res.body]).toEqual([200, [group(0, '0::0'), group(0, '0::1'), group(1, '1::2'), group(1, '1::3')]]);
      // Project 1 has no such person or events.
      expect((await get(`/api/projects/1/groups/related/?id=${PERSON}`)).body).toEqual([]);
    });

    it('refuses a request without an id, or a person id that is not a uuid', async () => {
      expect((await get(`/api/projects/${team}/groups/related/?group_type_index=0`)).body).toMatchObject({ attr: 'id', code: 'required' });
      expect((await get(`/api/projects/${team}/groups/related/?id=0::0`)).body).toMatchObject({ attr: 'id', code: 'invalid' });
    });
  });
});
