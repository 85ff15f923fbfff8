import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createDecidePersonCache, readDistinctIdCopy, readPersonCopy, runPersonEventsDeletion, type PersonChange } from '@sightline/persons';
import { createTestPerson, testEventRow, type TestPerson } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-03-10T12:00:00Z');
const DAY = 86_400_000;

/** Generated persons: p0 … p24, p(i) created i days before 2024-03-01 (p0 newest). */
const GENERATED = 25;
const createdAt = (i: number) => new Date(Date.parse('2024-03-01T00:00:00Z') - i * DAY).toISOString().replace('T', ' ').replace('Z', '');
const plan = (i: number) => (i % 3 === 0 ? 'pro' : i % 3 === 1 ? 'free' : 'team');

describe('persons API', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  const base = '/api/environments/1/persons';
  const generated: TestPerson[] = [];
  let otherProject: number;
  let stranger: TestPerson;
  /** Projects announced to decide's person caches, in order. */
  const announced: number[] = [];
  const personChanges = createInMemoryInvalidation<PersonChange>();

  beforeAll(async () => {
    await personChanges.subscribe((change) => announced.push(change?.teamId ?? -1));
    const decidePersons = createDecidePersonCache({ channel: personChanges, maxAgeMs: 60_000 });
    f = await createFlagFixture('persons', () => NOW, 'pg', { decidePersons });
    for (let i = 0; i < GENERATED; i++) {
      generated.push(
        await createTestPerson(f, {
          distinctIds: [`user-${i}`, `anon-${i}`],
          properties: { email: `User${i}@Example.com`, plan: plan(i), visits: i, ...(i % 5 === 0 ? { vip: true } : {}) },
          createdAt: createdAt(i),
        }),
      );
    }
    // A person created after "now" is not listed yet (PostHog's filter_future_persons).
    await createTestPerson(f, { distinctIds: ['future'], properties: { email: 'future@example.com' }, createdAt: '2024-03-11 00:00:00' });
    const [project] = await f.db.query<{ id: number }>(
      "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'other', 'phc_persons_other') RETURNING id",
      [f.organizationId],
    );
    otherProject = project!.id;
    stranger = await createTestPerson(f, { teamId: otherProject, distinctIds: ['user-0'], properties: { email: 'User0@Example.com' } });
    await f.addKey('phx_person_reader', ['person:read']);
    await f.addKey('phx_no_person', ['insight:read']);
  });
  afterAll(() => f.close());

  const list = async (query: string, key = admin) => request(f.app).get(`${base}/${query}`).set(key);
  const uuidsOf = (body: { results: { uuid: string }[] }) => body.results.map((p) => p.uuid);

  describe('list', () => {
    it('pages newest first with count and absolute next/previous links', async () => {
      const first = await list('?limit=10');
      expect(first.status).toBe(200);
      expect(first.body.count).toBe(GENERATED);
      expect(uuidsOf(first.body)).toEqual(generated.slice(0, 10).map((p) => p.uuid));
      const [latest] = await f.db.query<{ id: string }>('SELECT max(id)::text AS id FROM persons WHERE team_id = 1');
      expect(first.body.next).toBe(`${new URL(first.body.next).origin}${base}/?limit=10&persons_through=${latest!.id}&offset=10`);
      expect(first.body.previous).toBeNull();
      const second = await request(f.app)
        .get(new URL(first.body.next).pathname + new URL(first.body.next).search)
        .set(admin);
      expect(uuidsOf(second.body)).toEqual(generated.slice(10, 20).map((p) => p.uuid));
      expect(new URL(second.body.previous).search).toBe(`?limit=10&persons_through=${latest!.id}`);
      const last = await list('?limit=10&offset=20');
      expect(uuidsOf(last.body)).toEqual(generated.slice(20).map((p) => p.uuid));
      expect(last.body.next).toBeNull();
      // Every person exactly once across the pages.
      expect(new Set([...uuidsOf(first.body), ...uuidsOf(second.body), ...uuidsOf(last.body)]).size).toBe(GENERATED);
    });

    it('pages stay stable while persons are created: later pages leave out persons newer than the first page', async () => {
      const first = await list('?limit=5');
      expect(uuidsOf(first.body)).toEqual(generated.slice(0, 5).map((p) => p.uuid));
      // Created while the client pages: one sorts inside the first page, one before everything.
      const inside = await createTestPerson(f, { distinctIds: ['late-inside'], createdAt: '2024-02-26 12:00:00' });
      const newest = await createTestPerson(f, { distinctIds: ['late-newest'], createdAt: '2024-03-05 00:00:00' });
      const next = new URL(first.body.next);
      const second = await request(f.app)
        .get(next.pathname + next.search)
        .set(admin);
      expect(uuidsOf(second.body)).toEqual(generated.slice(5, 10).map((p) => p.uuid));
      expect(second.body.count).toBe(GENERATED);
      // A new first page sees them.
      const fresh = await list('?limit=6');
      expect(uuidsOf(fresh.body)).toEqual([newest.uuid, ...generated.slice(0, 4).map((p) => p.uuid), inside.uuid]);
      expect(fresh.body.count).toBe(GENERATED + 2);
      for (const person of [inside, newest]) expect((await request(f.app).delete(`${base}/${person.id}/`).set(admin)).status).toBe(204);
    });

    it('answers persons in PostHog shape: integer id, display name, non-uuid distinct ids first', async () => {
      const res = await list('?distinct_id=user-3');
      expect(res.body.results).toEqual([
        {
          type: 'person',
          id: generated[3]!.id,
          uuid: generated[3]!.uuid,
          name: 'User3@Example.com',
          distinct_ids: ['anon-3', 'user-3'],
          properties: { email: 'User3@Example.com', plan: 'pro', visits: 3 },
          is_identified: false,
          created_at: '2024-02-27T00:00:00.000Z',
        },
      ]);
      expect(res.body.count).toBe(1);
    });

    it('defaults to 100 per page', async () => {
      const res = await list('');
      expect(res.body.results).toHaveLength(GENERATED);
      expect(res.body.next).toBeNull();
    });

    it('filters by distinct id, email and search', async () => {
      expect(uuidsOf((await list('?distinct_id=anon-7')).body)).toEqual([generated[7]!.uuid]);
      expect(uuidsOf((await list('?distinct_id=nobody')).body)).toEqual([]);
      expect(uuidsOf((await list('?email=User12@Example.com')).body)).toEqual([generated[12]!.uuid]);
      // Exact: another case is another address.
      expect(uuidsOf((await list('?email=user12@example.com')).body)).toEqual([]);
      // Search: the e-mail contains it in any case …
      expect(uuidsOf((await list('?search=USER2')).body)).toEqual([2, 20, 21, 22, 23, 24].map((i) => generated[i]!.uuid));
      // … or it is exactly a distinct id.
      expect(uuidsOf((await list('?search=anon-11')).body)).toEqual([generated[11]!.uuid]);
      expect(uuidsOf((await list('?search=anon-1')).body)).toEqual([generated[1]!.uuid]);
    });

    it('filters by person properties with every kind of operator, as a list or a group', async () => {
      const props = (filters: unknown) => `?properties=${encodeURIComponent(JSON.stringify(filters))}`;
      const pick = (predicate: (i: number) => boolean) => generated.filter((_, i) => predicate(i)).map((p) => p.uuid);
      expect(uuidsOf((await list(props([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }]))).body)).toEqual(pick((i) => i % 3 === 0));
      expect(uuidsOf((await list(props([{ key: 'visits', value: 20, operator: 'gt', type: 'person' }]))).body)).toEqual(pick((i) => i > 20));
      expect(uuidsOf((await list(props([{ key: 'vip', operator: 'is_set', type: 'person' }]))).body)).toEqual(pick((i) => i % 5 === 0));
      expect(uuidsOf((await list(props([{ key: 'vip', operator: 'is_not_set', type: 'person' }]))).body)).toEqual(pick((i) => i % 5 !== 0));
      expect(uuidsOf((await list(props([{ key: 'email', value: '^User1\\d@', operator: 'regex', type: 'person' }]))).body)).toEqual(
        pick((i) => i >= 10 && i <= 19),
      );
      expect(uuidsOf((await list(props([{ key: 'plan', value: ['pro', 'team'], operator: 'is_not', type: 'person' }]))).body)).toEqual(
        pick((i) => i % 3 === 1),
      );
      const group = {
        type: 'OR',
        values: [
          { type: 'AND', values: [{ key: 'plan', value: 'free', type: 'person' }] },
          { type: 'AND', values: [{ key: 'visits', value: [3, 5], operator: 'between', type: 'person' }] },
        ],
      };
      expect(uuidsOf((await list(props(group))).body)).toEqual(pick((i) => i % 3 === 1 || (i >= 3 && i <= 5)));
      // Combined with paging: the count is the filtered count.
      const paged = await list(`${props([{ key: 'plan', value: 'pro', type: 'person' }])}&limit=3`);
      expect(paged.body.count).toBe(9);
      expect(uuidsOf(paged.body)).toEqual(pick((i) => i % 3 === 0).slice(0, 3));
    });

    it('filters by cohort, as a parameter or a filter', async () => {
      const cohort = await request(f.app)
        .post('/api/projects/1/cohorts/')
        .set(admin)
        .send({ name: 'VIPs', filters: { properties: { type: 'AND', values: [{ key: 'vip', value: true, operator: 'exact', type: 'person' }] } } });
      expect(cohort.status).toBe(201);
      const vips = generated.filter((_, i) => i % 5 === 0).map((p) => p.uuid);
      expect(uuidsOf((await list(`?cohort=${cohort.body.id}`)).body)).toEqual(vips);
      const asFilter = encodeURIComponent(JSON.stringify([{ key: 'id', value: cohort.body.id, type: 'cohort' }]));
      expect(uuidsOf((await list(`?properties=${asFilter}`)).body)).toEqual(vips);
      // The cohort's own persons list shares the query and the person shape.
      const members = await request(f.app).get(`/api/projects/1/cohorts/${cohort.body.id}/persons/`).set(admin);
      expect(members.body.results.map((p: { id: number }) => p.id)).toEqual(generated.filter((_, i) => i % 5 === 0).map((p) => p.id));
      const unknown = await list('?cohort=999999');
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ type: 'validation_error', attr: 'cohort', code: 'cohort_does_not_exist' });
    });

    it('refuses filters it cannot apply with a 400 naming the field', async () => {
      const bad = await list(`?properties=${encodeURIComponent('[{"key":"$browser","value":"Chrome","type":"event"}]')}`);
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ type: 'validation_error', attr: 'properties__0', code: 'not_supported' });
      const notJson = await list('?properties=%5B%7B');
      expect(notJson.status).toBe(400);
      expect(notJson.body).toMatchObject({ attr: 'properties', code: 'parse_error' });
      const badRegex = await list(`?properties=${encodeURIComponent('[{"key":"email","value":"(","operator":"regex","type":"person"}]')}`);
      expect(badRegex.status).toBe(400);
    });

    it('exports CSV with one column per property', async () => {
      const res = await list(`?format=csv&properties=${encodeURIComponent('[{"key":"plan","value":"pro","type":"person"}]')}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      const lines = res.text.trimEnd().split('\r\n');
      expect(lines[0]).toBe('id,uuid,name,distinct_ids,is_identified,created_at,properties.email,properties.plan,properties.vip,properties.visits');
      expect(lines).toHaveLength(1 + 9);
      const p0 = generated[0]!;
      expect(lines[1]).toBe(`${p0.id},${p0.uuid},User0@Example.com,"anon-0,user-0",false,2024-03-01T00:00:00.000Z,User0@Example.com,pro,true,0`);
      // The export is not paged: limit 100 does not apply, an explicit limit does.
      expect((await list('?format=csv')).text.trimEnd().split('\r\n')).toHaveLength(1 + GENERATED);
      expect((await list('?format=csv&limit=2')).text.trimEnd().split('\r\n')).toHaveLength(1 + 2);
    });

    it("never shows another project's persons", async () => {
      const mine = await list('?distinct_id=user-0');
      expect(uuidsOf(mine.body)).toEqual([generated[0]!.uuid]);
      const theirs = await request(f.app).get(`/api/projects/${otherProject}/persons/?distinct_id=user-0`).set(admin);
      expect(uuidsOf(theirs.body)).toEqual([stranger.uuid]);
      expect((await request(f.app).get(`${base}/${stranger.id}/`).set(admin)).status).toBe(404);
      expect((await request(f.app).get(`${base}/${stranger.uuid}/`).set(admin)).status).toBe(404);
    });

    it('needs person:read', async () => {
      expect((await list('', bearer('phx_person_reader'))).status).toBe(200);
      expect((await list('', bearer('phx_no_person'))).status).toBe(403);
    });
  });

  describe('one person', () => {
    it('is read by integer id or uuid; anything else is a 400 pointing at ?distinct_id=', async () => {
      const byId = await request(f.app).get(`${base}/${generated[4]!.id}/`).set(admin);
      expect(byId.status).toBe(200);
      expect(byId.body).toMatchObject({ id: generated[4]!.id, uuid: generated[4]!.uuid, name: 'User4@Example.com' });
      const byUuid = await request(f.app).get(`/api/projects/1/persons/${generated[4]!.uuid}/`).set(admin);
      expect(byUuid.body).toEqual(byId.body);
      const bad = await request(f.app).get(`${base}/user-4/`).set(admin);
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toBe(
        'The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=user-4 instead.',
      );
      expect((await request(f.app).get(`${base}/987654/`).set(admin)).status).toBe(404);
    });

    it('is read by its uuid in upper case too', async () => {
      const res = await request(f.app).get(`${base}/${generated[4]!.uuid.toUpperCase()}/`).set(admin);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: generated[4]!.id, uuid: generated[4]!.uuid });
    });

    it('PATCH merges properties, answers the person, and the list and ClickHouse show it at once', async () => {
      const person = generated[6]!;
      const res = await request(f.app)
        .patch(`${base}/${person.id}/`)
        .set(admin)
        .send({ properties: { plan: 'enterprise', seats: 40 } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: person.id, properties: { email: 'User6@Example.com', plan: 'enterprise', seats: 40, visits: 6 } });
      const listed = await list('?distinct_id=user-6');
      expect(listed.body.results[0].properties).toEqual(res.body.properties);
      const byFilter = await list(`?properties=${encodeURIComponent('[{"key":"plan","value":"enterprise","type":"person"}]')}`);
      expect(uuidsOf(byFilter.body)).toEqual([person.uuid]);
      const copy = await readPersonCopy(f.ch, 1, person.uuid);
      expect(copy).toMatchObject({ properties: res.body.properties, isDeleted: false, version: 1 });
      const [stored] = await f.db.query<{ version: string }>('SELECT version FROM persons WHERE id = $1', [person.id]);
      expect(Number(stored!.version)).toBe(1);
    });

    it('PATCH needs properties (an object) and person:write', async () => {
      const missing = await request(f.app).patch(`${base}/${generated[6]!.id}/`).set(admin).send({});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'properties' });
      const notObject = await request(f.app)
        .patch(`${base}/${generated[6]!.id}/`)
        .set(admin)
        .send({ properties: ['a'] });
      expect(notObject.status).toBe(400);
      const reader = await request(f.app)
        .patch(`${base}/${generated[6]!.id}/`)
        .set(bearer('phx_person_reader'))
        .send({ properties: { a: 1 } });
      expect(reader.status).toBe(403);
    });

    it('update_property and delete_property change one key', async () => {
      const person = generated[8]!;
      const set = await request(f.app).post(`${base}/${person.id}/update_property/`).set(admin).send({ key: 'color', value: 'blue' });
      expect(set.status).toBe(202);
      const unset = await request(f.app).post(`${base}/${person.id}/delete_property/`).set(admin).send({ $unset: 'plan' });
      expect(unset.status).toBe(201);
      expect(unset.body).toEqual({ success: true });
      const after = await request(f.app).get(`${base}/${person.id}/`).set(admin);
      expect(after.body.properties).toEqual({ email: 'User8@Example.com', visits: 8, color: 'blue' });
      expect((await readPersonCopy(f.ch, 1, person.uuid))!.properties).toEqual(after.body.properties);
    });

    it('POST /persons/ answers 405 as PostHog does', async () => {
      const res = await request(f.app).post(`${base}/`).set(admin).send({ properties: {} });
      expect(res.status).toBe(405);
      expect(res.body).toMatchObject({ type: 'invalid_request', code: 'method_not_allowed' });
    });

    it('lists its activity', async () => {
      const res = await request(f.app).get(`${base}/${generated[8]!.id}/activity/`).set(admin);
      expect(res.status).toBe(200);
      expect(res.body.results.map((r: { activity: string; detail: { changes: { field: string }[] } }) => [r.activity, r.detail.changes[0]!.field])).toEqual([
        ['updated', 'plan'],
        ['updated', 'color'],
      ]);
      expect(res.body.total_count).toBe(2);
    });

    it('values: the values of a property with how many persons have each', async () => {
      const res = await request(f.app).get(`${base}/values/?key=plan`).set(admin);
      expect(res.status).toBe(200);
      // p6 moved to enterprise, p8 has no plan left.
      expect(res.body).toEqual([
        { name: 'free', count: 8 },
        { name: 'pro', count: 8 },
        { name: 'team', count: 7 },
        { name: 'enterprise', count: 1 },
      ]);
      expect((await request(f.app).get(`${base}/values/?key=plan&value=EA`).set(admin)).body).toEqual([{ name: 'team', count: 7 }]);
      expect((await request(f.app).get(`${base}/values/`).set(admin)).status).toBe(400);
    });
  });

  describe('deletion', () => {
    it('DELETE without delete_events removes the person (204) from both stores and queues nothing', async () => {
      const person = generated[24]!;
      const res = await request(f.app).delete(`${base}/${person.id}/`).set(admin);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await f.db.query('SELECT 1 FROM persons WHERE id = $1', [person.id])).toEqual([]);
      expect(await f.db.query("SELECT 1 FROM person_distinct_ids WHERE distinct_id IN ('user-24', 'anon-24') AND team_id = 1")).toEqual([]);
      expect(await f.db.query('SELECT 1 FROM queued_deletions WHERE person_uuid = $1', [person.uuid])).toEqual([]);
      expect(await readPersonCopy(f.ch, 1, person.uuid)).toMatchObject({ isDeleted: true, version: 100 });
      expect(await readDistinctIdCopy(f.ch, 1, 'user-24')).toBeNull();
      expect(uuidsOf((await list('?distinct_id=user-24')).body)).toEqual([]);
      expect((await request(f.app).get(`${base}/${person.id}/`).set(admin)).status).toBe(404);
      // The versions written are kept, so a person created again from the same id outranks them.
      expect(await f.db.query('SELECT version FROM deleted_distinct_id_versions WHERE team_id = 1 AND distinct_id = $1', ['user-24'])).toEqual([
        { version: '100' },
      ]);
    });

    it('DELETE ?delete_events=true queues a task; the job removes exactly that person’s events', async () => {
      const [gone, kept] = [generated[23]!, generated[22]!];
      await insertEvents(f.ch, [
        testEventRow({ event: 'view', atMs: NOW - DAY, distinctId: 'user-23', personId: gone.uuid }),
        testEventRow({ event: 'view', atMs: NOW - 2 * DAY, distinctId: 'anon-23', personId: gone.uuid }),
        // Written before a merge with another person id, but under one of the person's distinct ids.
        testEventRow({ event: 'view', atMs: NOW - 3 * DAY, distinctId: 'anon-23' }),
        testEventRow({ event: 'view', atMs: NOW - DAY, distinctId: 'user-22', personId: kept.uuid }),
        testEventRow({ event: 'view', atMs: NOW - DAY, distinctId: 'user-23', personId: stranger.uuid, teamId: otherProject }),
      ]);
      const res = await request(f.app).delete(`${base}/${gone.id}/?delete_events=true`).set(admin);
      expect(res.status).toBe(204);
      const [task] = await f.db.query<{ person_uuid: string; distinct_ids: string[]; done_at: Date | null; created_by: number }>(
        'SELECT person_uuid::text AS person_uuid, distinct_ids, done_at, created_by FROM queued_deletions WHERE person_uuid = $1',
        [gone.uuid],
      );
      expect(task).toEqual({ person_uuid: gone.uuid, distinct_ids: ['anon-23', 'user-23'], done_at: null, created_by: f.adminUserId });
      const count = async (sql: string) => Number((await (await f.ch.query({ query: sql, format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n);
      expect(await count("SELECT count() AS n FROM events WHERE team_id = 1 AND distinct_id IN ('user-23', 'anon-23')")).toBe(3);
      expect(await runPersonEventsDeletion({ db: f.db, ch: f.ch })).toEqual({ tasks: 1, eventsDeleted: 3, personRowsDeleted: 3, batches: 1 });
      expect(await count("SELECT count() AS n FROM events WHERE team_id = 1 AND distinct_id IN ('user-23', 'anon-23')")).toBe(0);
      expect(await count("SELECT count() AS n FROM events WHERE team_id = 1 AND distinct_id = 'user-22'")).toBe(1);
      expect(await count(`SELECT count() AS n FROM events WHERE team_id = ${otherProject} AND distinct_id = 'user-23'`)).toBe(1);
      const [done] = await f.db.query<{ events_deleted: string; person_rows_deleted: number; done_at: Date | null; attempts: number }>(
        'SELECT events_deleted, person_rows_deleted, done_at, attempts FROM queued_deletions WHERE person_uuid = $1',
        [gone.uuid],
      );
      // The person and its two distinct ids.
      expect(done).toMatchObject({ events_deleted: '3', person_rows_deleted: 3, attempts: 1 });
      expect(done!.done_at).toBeInstanceOf(Date);
      expect(await runPersonEventsDeletion({ db: f.db, ch: f.ch })).toEqual({ tasks: 0, eventsDeleted: 0, personRowsDeleted: 0, batches: 0 });
    });

    it('bulk_delete: PostHog’s 400 texts for too many ids or none', async () => {
      const many = Array.from({ length: 1001 }, (_, i) => `d${i}`);
      const tooManyDistinct = await request(f.app).post(`${base}/bulk_delete/`).set(admin).send({ distinct_ids: many });
      expect(tooManyDistinct.status).toBe(400);
      expect(tooManyDistinct.body).toMatchObject({ type: 'validation_error', detail: 'You can only pass 1000 distinct_ids in one call' });
      const tooMany = await request(f.app).post(`${base}/bulk_delete/`).set(admin).send({ ids: many });
      expect(tooMany.body.detail).toBe('You can only pass 1000 ids in one call');
      const neither = await request(f.app).post(`${base}/bulk_delete/`).set(admin).send({});
      expect(neither.status).toBe(400);
      expect(neither.body.detail).toBe('You need to specify either distinct_ids or ids');
      const both = await request(f.app)
        .post(`${base}/bulk_delete/`)
        .set(admin)
        .send({ ids: [generated[0]!.uuid], distinct_ids: ['user-0'] });
      expect(both.status).toBe(400);
      expect(await f.db.query('SELECT 1 FROM persons WHERE id = $1', [generated[0]!.id])).toHaveLength(1);
    });

    it('bulk_delete by distinct ids or ids, with or without delete_events, within the project only', async () => {
      const byDistinct = await request(f.app)
        .post(`${base}/bulk_delete/`)
        .set(admin)
        .send({ distinct_ids: ['user-21', 'anon-21', 'user-20', 'nobody'], delete_events: true });
      expect(byDistinct.status).toBe(202);
      expect(byDistinct.body).toEqual({ persons_found: 2, persons_deleted: 2, events_deletion_queued: 2 });
      const byIds = await request(f.app)
        .post(`${base}/bulk_delete/`)
        .set(admin)
        .send({ ids: [generated[19]!.uuid, String(generated[18]!.id), stranger.uuid] });
      expect(byIds.body).toEqual({ persons_found: 2, persons_deleted: 2, events_deletion_queued: 0 });
      // Left: p0 … p17 and p22 (p18 … p21 bulk-deleted here, p23 and p24 above).
      expect(uuidsOf((await list('?limit=100')).body)).toEqual([...generated.slice(0, 18), generated[22]!].map((p) => p.uuid));
      // The other project's person is untouched.
      expect(await f.db.query('SELECT 1 FROM persons WHERE id = $1', [stranger.id])).toHaveLength(1);
      expect(
        await f.db.query('SELECT 1 FROM queued_deletions WHERE done_at IS NULL AND person_uuid = ANY($1::uuid[])', [
          [generated[21]!.uuid, generated[20]!.uuid],
        ]),
      ).toHaveLength(2);
    });
  });

  describe('split, cohorts of a person, display names', () => {
    it("names persons by the project's person_display_name_properties when set", async () => {
      const setNames = async (names: string[] | null) =>
        expect((await request(f.app).patch('/api/projects/1/').set(admin).send({ person_display_name_properties: names })).status).toBe(200);
      await setNames(['plan']);
      try {
        expect((await list('?distinct_id=user-2')).body.results[0].name).toBe('team');
      } finally {
        await setNames(null);
      }
      expect((await list('?distinct_id=user-2')).body.results[0].name).toBe('User2@Example.com');
    });

    it('cohorts?person_id= lists the dynamic and static cohorts the person is in now', async () => {
      const pro = await request(f.app)
        .post('/api/projects/1/cohorts/')
        .set(admin)
        .send({ name: 'Pro plan', filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] } } });
      const picked = await request(f.app).post('/api/projects/1/cohorts/').set(admin).send({ name: 'Picked', is_static: true });
      expect([pro.status, picked.status]).toEqual([201, 201]);
      announced.length = 0;
      const added = await request(f.app)
        .patch(`/api/projects/1/cohorts/${picked.body.id}/add_persons_to_static_cohort/`)
        .set(admin)
        .send({ person_ids: [generated[1]!.uuid] });
      expect(added.status).toBe(200);
      // Decide's cached persons carry their static cohorts: the change is announced to them.
      expect(announced).toContain(1);
      const cohortsOf = async (id: string | number) => request(f.app).get(`${base}/cohorts/?person_id=${id}`).set(admin);
      // p3: plan pro, not picked; p1: plan free, picked.
      const p3 = await cohortsOf(generated[3]!.uuid);
      expect(p3.status).toBe(200);
      expect(p3.body.results.map((c: { name: string }) => c.name)).toContain('Pro plan');
      expect(p3.body.results.map((c: { name: string }) => c.name)).not.toContain('Picked');
      expect(p3.body.results[0]).toMatchObject({ id: expect.any(Number), is_static: expect.any(Boolean), filters: expect.any(Object) });
      const p1 = await cohortsOf(generated[1]!.id);
      expect(p1.body.results.map((c: { name: string }) => c.name)).toEqual(['Picked']);
      expect((await cohortsOf('00000000-0000-0000-0000-000000000000')).status).toBe(404);
      expect((await request(f.app).get(`${base}/cohorts/`).set(admin)).body).toMatchObject({ type: 'validation_error', attr: 'person_id', code: 'required' });
    });

    it('split gives every distinct id but the main one a person of its own, in both stores, and events follow their id', async () => {
      const merged = await createTestPerson(f, {
        distinctIds: ['split-main', 'split-anon', 'split-phone'],
        properties: { email: 'split@example.com' },
        createdAt: createdAt(1),
      });
      await insertEvents(f.ch, [
        testEventRow({ event: 'seen', atMs: NOW - DAY, distinctId: 'split-anon', personId: merged.uuid }),
        testEventRow({ event: 'seen', atMs: NOW - DAY, distinctId: 'split-main', personId: merged.uuid }),
      ]);
      announced.length = 0;
      const wrong = await request(f.app).post(`${base}/${merged.id}/split/`).set(admin).send({ main_distinct_id: 'user-3' });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ type: 'validation_error', attr: 'main_distinct_id' });
      const res = await request(f.app).post(`${base}/${merged.id}/split/`).set(admin).send({ main_distinct_id: 'split-main' });
      expect([res.status, res.body]).toEqual([201, { success: true }]);
      expect(announced).toEqual([1]);
      const owners = await f.db.query<{ distinct_id: string; person_id: string }>(
        "SELECT distinct_id, person_id::text AS person_id FROM person_distinct_ids WHERE distinct_id LIKE 'split-%' ORDER BY distinct_id",
      );
      expect(new Set(owners.map((o) => o.person_id)).size).toBe(3);
      expect(owners.find((o) => o.distinct_id === 'split-main')!.person_id).toBe(String(merged.id));
      // With a main id named, the original keeps its properties; the new persons start empty.
      const main = (await list('?distinct_id=split-main')).body.results[0];
      expect(main).toMatchObject({ uuid: merged.uuid, distinct_ids: ['split-main'], properties: { email: 'split@example.com' } });
      const anon = (await list('?distinct_id=split-anon')).body.results[0];
      expect(anon).toMatchObject({ distinct_ids: ['split-anon'], properties: {} });
      expect(anon.uuid).not.toBe(merged.uuid);
      expect((await readDistinctIdCopy(f.ch, 1, 'split-anon'))!.personId).toBe(anon.uuid);
      // Queries resolve the earlier event of split-anon to its new person.
      const trend = await request(f.app)
        .post('/api/environments/1/insights/trend/')
        .set(admin)
        .send({ events: [{ id: 'seen', math: 'dau' }], date_from: '-7d', interval: 'day' });
      expect(trend.status).toBe(200);
      expect(trend.body.result[0].count).toBe(2);
    });

    it('split without a main id keeps the first distinct id and clears the properties', async () => {
      const merged = await createTestPerson(f, { distinctIds: ['split2-a', 'split2-b'], properties: { email: 'split2@example.com' }, createdAt: createdAt(1) });
      const res = await request(f.app).post(`${base}/${merged.id}/split/`).set(admin).send({});
      expect(res.status).toBe(201);
      const kept = (await list('?distinct_id=split2-a')).body.results[0];
      expect(kept).toMatchObject({ uuid: merged.uuid, properties: {} });
      expect(kept.distinct_ids).toHaveLength(1);
      expect((await readPersonCopy(f.ch, 1, merged.uuid))!.properties).toEqual({});
    });
  });
});
