import request from 'supertest';
import { insertGroup, insertJourneys, journeyPersonUuid } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

/**
 * The persons behind a funnel step over HTTP: the funnel answer's converted/dropped people URLs
 * (legacy `persons/funnel/`, posthog/api/person.py `funnel`) and the query API's ActorsQuery of a
 * FunnelsActorsQuery. Cases from ee/clickhouse/views/test/funnel/test_clickhouse_funnel.py.
 */
const NOW = Date.parse('2020-02-01T00:00:00Z');

describe('the persons behind a funnel step (persons/funnel/ and ActorsQuery)', () => {
  let f: FlagFixture;
  let other = 0;
  const admin = bearer(ADMIN_KEY);
  const twoSteps = {
    events: [
      { id: 'user signed up', type: 'events', order: 0 },
      { id: 'paid', type: 'events', order: 1 },
    ],
    date_from: '2020-01-01',
    date_to: '2020-01-14',
  };

  beforeAll(async () => {
    f = await createFlagFixture('persons-funnel', () => NOW);
    await f.addKey('phx_insight_only', ['insight:read', 'person:read']);
    await f.addKey('phx_query_only', ['query:read', 'insight:read']);
    // Project 1, test_funnel_aggregation_with_groups.
    await insertGroup(f.db, 1, 0, 'org:5', { industry: 'finance' });
    await insertGroup(f.db, 1, 0, 'org:6', { industry: 'technology' });
    await insertJourneys(f, {
      user_1: [
        { event: 'user signed up', timestamp: '2020-01-02 14:00:00', properties: { $group_0: 'org:5' } },
        { event: 'user signed up', timestamp: '2020-01-10 14:00:00', properties: { $group_0: 'org:6' } },
      ],
      user_2: [{ event: 'paid', timestamp: '2020-01-03 14:00:00', properties: { $group_0: 'org:5' } }],
    });
    // Another project, test_funnel_with_groups_entity_filtering.
    const [row] = await f.db.query<{ id: number }>(
      "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'other', 'phc_persons_funnel_other') RETURNING id",
      [f.organizationId],
    );
    other = row!.id;
    await insertJourneys(
      f,
      {
        user_1: [
          { event: 'user signed up', timestamp: '2020-01-02 14:00:00', properties: { $group_0: 'org:5' } },
          { event: 'paid', timestamp: '2020-01-03 14:00:00', properties: { $group_0: 'org:6' } },
          { event: 'user signed up', timestamp: '2020-01-02 14:00:00', properties: { $group_0: 'org:6' } },
          { event: 'paid', timestamp: '2020-01-03 14:00:00', properties: { $group_0: 'org:6' } },
        ],
      },
      { teamId: other, personProperties: { user_1: { email: 'one@example.com' } } },
    );
  });
  afterAll(() => f.close());

  const people = (res: request.Response) => (res.body as { results: { people: { id: string }[]; count: number }[] }).results[0]!.people;

  it('test_funnel_aggregation_with_groups: the converted people URL lists the groups (test_clickhouse_funnel.py)', async () => {
    const funnel = await request(f.app)
      .post('/api/projects/1/insights/funnel/')
      .set(admin)
      .send({ ...twoSteps, aggregation_group_type_index: 0 });
    expect(funnel.status).toBe(200);
    const [signedUp, paid] = funnel.body.result as { count: number; converted_people_url: string; dropped_people_url: string | null }[];
    expect([signedUp!.count, paid!.count]).toEqual([2, 1]);
    expect(signedUp!.converted_people_url).toMatch(/^\/api\/projects\/1\/persons\/funnel\/\?/);
    const actors = await request(f.app).get(signedUp!.converted_people_url).set(admin);
    expect(actors.status).toBe(200);
    expect(people(actors).map((a) => a.id)).toEqual(['org:5', 'org:6']);
    expect(people(actors)[0]).toMatchObject({ type: 'group', group_key: 'org:5', group_type_index: 0, properties: { industry: 'finance' } });
    expect(actors.body).toMatchObject({ next: null, missing_persons: 0, results: [{ count: 2 }] });
    // Dropped off before paying: org:6 only.
    expect(people(await request(f.app).get(paid!.dropped_people_url!).set(admin)).map((a) => a.id)).toEqual(['org:6']);
  });

  it('test_funnel_with_groups_entity_filtering: persons, through the URL (test_clickhouse_funnel.py)', async () => {
    const body = { ...twoSteps, events: [{ ...twoSteps.events[0], properties: [{ key: '$group_0', value: 'org:5', type: 'event' }] }, twoSteps.events[1]] };
    const funnel = await request(f.app).post(`/api/projects/${other}/insights/funnel/`).set(admin).send(body);
    const [signedUp, paid] = funnel.body.result as { count: number; converted_people_url: string }[];
    expect([signedUp!.count, paid!.count]).toEqual([1, 1]);
    const actors = await request(f.app).get(signedUp!.converted_people_url).set(admin);
    expect(people(actors)).toEqual([
      expect.objectContaining({
        type: 'person',
        id: journeyPersonUuid('user_1', other),
        uuid: journeyPersonUuid('user_1', other),
        name: 'one@example.com',
        distinct_ids: ['user_1'],
        properties: { email: 'one@example.com' },
      }),
    ]);
  });

  it("another project's URL lists that project's own persons only", async () => {
    const funnel = await request(f.app).post('/api/projects/1/insights/funnel/').set(admin).send(twoSteps);
    const url = (funnel.body.result as { converted_people_url: string }[])[0]!.converted_people_url;
    expect(people(await request(f.app).get(url).set(admin)).map((a) => a.id)).toEqual([journeyPersonUuid('user_1', 1)]);
    // The same funnel in the other project: its user_1, never project 1's.
    const actors = await request(f.app)
      .get(url.replace('/api/projects/1/', `/api/projects/${other}/`))
      .set(admin);
    expect(actors.status).toBe(200);
    expect(people(actors).map((a) => a.id)).toEqual([journeyPersonUuid('user_1', other)]);
  });

  it('a breakdown value travels in the URL as JSON; a funnel trend takes entrance_period_start and drop_off', async () => {
    const funnel = await request(f.app)
      .post('/api/projects/1/insights/funnel/')
      .set(admin)
      .send({ ...twoSteps, breakdown: '$browser', breakdown_type: 'event' });
    const [[signedUp]] = funnel.body.result as { breakdown_value: string[]; converted_people_url: string }[][];
    expect(signedUp!.breakdown_value).toEqual(['']);
    expect(new URL(signedUp!.converted_people_url, 'http://x').searchParams.get('funnel_step_breakdown')).toBe('[""]');
    expect(people(await request(f.app).get(signedUp!.converted_people_url).set(admin)).map((a) => a.id)).toEqual([journeyPersonUuid('user_1', 1)]);
    const chrome = signedUp!.converted_people_url.replace('funnel_step_breakdown=%5B%22%22%5D', 'funnel_step_breakdown=%5B%22Chrome%22%5D');
    expect(people(await request(f.app).get(chrome).set(admin))).toEqual([]);

    const trend = (extra: string) =>
      request(f.app)
        .get(
          `/api/projects/${other}/persons/funnel/?funnel_viz_type=trends&date_from=2020-01-01&date_to=2020-01-14&events=${encodeURIComponent(
            JSON.stringify(twoSteps.events),
          )}&entrance_period_start=${encodeURIComponent('2020-01-02 00:00:00')}${extra}`,
        )
        .set(admin);
    expect(people(await trend('')).map((a) => a.id)).toEqual([journeyPersonUuid('user_1', other)]);
    expect(people(await trend('&drop_off=true'))).toEqual([]);
    const missing = await request(f.app)
      .get(`/api/projects/${other}/persons/funnel/?funnel_viz_type=trends&events=${encodeURIComponent(JSON.stringify(twoSteps.events))}`)
      .set(admin);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ attr: 'entrance_period_start', code: 'required' });
  });

  const actorsQuery = (funnelStep: unknown, extra: Record<string, unknown> = {}) => ({
    query: {
      kind: 'ActorsQuery',
      source: {
        kind: 'FunnelsActorsQuery',
        funnelStep,
        source: {
          kind: 'FunnelsQuery',
          series: [
            { kind: 'EventsNode', event: 'user signed up' },
            { kind: 'EventsNode', event: 'paid' },
          ],
          dateRange: { date_from: '2020-01-01', date_to: '2020-01-14' },
        },
      },
      ...extra,
    },
  });

  it('POST /query/ answers an ActorsQuery of a FunnelsActorsQuery in the ActorsQueryResponse shape', async () => {
    const res = await request(f.app).post(`/api/environments/${other}/query/`).set(admin).send(actorsQuery(2));
    expect(res.status).toBe(200);
    const uuid = journeyPersonUuid('user_1', other);
    expect(res.body).toMatchObject({ columns: ['person', 'id', 'person.$delete'], hasMore: false, limit: 100, offset: 0, missing_actors_count: 0 });
    expect(res.body.results).toEqual([[expect.objectContaining({ id: uuid, distinct_ids: ['user_1'], properties: { email: 'one@example.com' } }), uuid, 1]]);
    // The web app's persons modal: select ["actor"], an empty orderBy, and a search on the e-mail.
    const modal = await request(f.app)
      .post(`/api/environments/${other}/query/`)
      .set(admin)
      .send(actorsQuery(1, { select: ['actor'], orderBy: [], search: 'ONE@example' }));
    expect(modal.body.results).toEqual([[expect.objectContaining({ id: uuid })]]);
    const none = await request(f.app)
      .post(`/api/environments/${other}/query/`)
      .set(admin)
      .send(actorsQuery(1, { search: 'two@' }));
    expect(none.body.results).toEqual([]);
    // The FunnelsActorsQuery sent alone answers the same.
    const bare = await request(f.app)
      .post(`/api/projects/${other}/query/`)
      .set(admin)
      .send({ query: actorsQuery(2).query.source });
    expect(bare.body.results).toEqual(res.body.results);
  });

  it('persons/funnel/correlation/ lists the persons behind a correlation row (ee/clickhouse/views/person.py funnel_correlation)', async () => {
    const [row] = await f.db.query<{ id: number }>(
      "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'correlation', 'phc_persons_funnel_corr') RETURNING id",
      [f.organizationId],
    );
    const team = row!.id;
    const signedUp = { event: 'user signed up', timestamp: '2020-01-02 14:00:00' };
    const browse = { event: 'browse', timestamp: '2020-01-03 14:00:00' };
    const paid = { event: 'paid', timestamp: '2020-01-04 14:00:00' };
    await insertJourneys(
      f,
      { user_a: [signedUp, browse, paid], user_b: [signedUp, browse], user_c: [signedUp, paid] },
      { teamId: team, personProperties: { user_a: { plan: 'pro' }, user_b: { plan: 'pro' }, user_c: { plan: 'free' } } },
    );
    const url = (params: Record<string, string>) =>
      `/api/projects/${team}/persons/funnel/correlation/?${new URLSearchParams({ events: JSON.stringify(twoSteps.events), date_from: '2020-01-01', date_to: '2020-01-14', ...params })}`;
    const entity = JSON.stringify({ id: 'browse', type: 'events' });
    const ids = async (params: Record<string, string>) => {
      const res = await request(f.app).get(url(params)).set(admin);
      expect(res.status).toBe(200);
      return people(res).map((a) => a.id);
    };
    expect(await ids({ funnel_correlation_person_entity: entity, funnel_correlation_person_converted: 'TrUe' })).toEqual([journeyPersonUuid('user_a', team)]);
    expect(await ids({ funnel_correlation_person_entity: entity, funnel_correlation_person_converted: 'false' })).toEqual([journeyPersonUuid('user_b', team)]);
    const first = await request(f.app)
      .get(url({ funnel_correlation_person_entity: entity, funnel_correlation_person_limit: '1' }))
      .set(admin);
    expect(first.body).toMatchObject({ results: [{ count: 1 }], missing_persons: 0 });
    expect(people(first)[0]).toMatchObject({ type: 'person', distinct_ids: [expect.stringMatching(/^user_[ab]$/)] });
    const next = first.body.next as string;
    expect(new URL(next).searchParams.get('funnel_correlation_person_offset')).toBe('1');
    const second = await request(f.app)
      .get(new URL(next).pathname + new URL(next).search)
      .set(admin);
    expect([...people(first), ...people(second)].map((a) => a.id).sort()).toEqual(
      [journeyPersonUuid('user_a', team), journeyPersonUuid('user_b', team)].sort(),
    );
    expect(second.body.next).toBeNull();
    const proValues = JSON.stringify([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }]);
    const property = { funnel_correlation_type: 'properties', funnel_correlation_property_values: proValues };
    expect(await ids({ ...property, funnel_correlation_person_converted: 'true' })).toEqual([journeyPersonUuid('user_a', team)]);
    // Project 1 has none of these persons.
    expect(
      people(
        await request(f.app)
          .get(url({ funnel_correlation_person_entity: entity }).replace(`/projects/${team}/`, '/projects/1/'))
          .set(admin),
      ),
    ).toEqual([]);
    const missing = await request(f.app)
      .get(url({ funnel_correlation_person_converted: 'true' }))
      .set(admin);
    expect({ status: missing.status, attr: missing.body.attr }).toEqual({ status: 400, attr: 'funnel_correlation_person_entity' });
    const action = await request(f.app)
      .get(url({ funnel_correlation_person_entity: JSON.stringify({ id: 1, type: 'actions' }) }))
      .set(admin);
    expect({ status: action.status, code: action.body.code }).toEqual({ status: 400, code: 'not_supported' });
    expect(
      (
        await request(f.app)
          .get(url({ funnel_correlation_person_entity: entity }))
          .set(bearer('phx_query_only'))
      ).status,
    ).toBe(403);
  });

  it('needs query:read (ActorsQuery) and person:read (persons/funnel/); bad input is a 400', async () => {
    expect((await request(f.app).post('/api/environments/1/query/').set(bearer('phx_insight_only')).send(actorsQuery(1))).status).toBe(403);
    const legacy = `/api/projects/1/persons/funnel/?events=${encodeURIComponent(JSON.stringify(twoSteps.events))}&date_from=2020-01-01&funnel_step=1`;
    expect((await request(f.app).get(legacy).set(bearer('phx_query_only'))).status).toBe(403);
    expect((await request(f.app).get(legacy).set(bearer('phx_insight_only'))).status).toBe(200);
    const zero = await request(f.app).get(legacy.replace('funnel_step=1', 'funnel_step=0')).set(admin);
    expect(zero.status).toBe(400);
    expect(zero.body).toMatchObject({ type: 'validation_error', attr: 'funnel_step' });
    const text = await request(f.app).post('/api/environments/1/query/').set(admin).send(actorsQuery('blah'));
    expect(text.status).toBe(400);
    expect(text.body).toMatchObject({ attr: 'query__source__funnelStep' });
    const beyond = await request(f.app).post('/api/environments/1/query/').set(admin).send(actorsQuery(3));
    expect(beyond.status).toBe(400);
    const column = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send(actorsQuery(1, { select: ['sum(1)'] }));
    expect(column.body).toMatchObject({ attr: 'query__select', code: 'not_supported' });
    // Malformed pieces are 400s naming the field, never a 500.
    const source = actorsQuery(null).query.source;
    const malformed: [Record<string, unknown>, string][] = [
      [{ query: { kind: 'ActorsQuery', source: { kind: 'FunnelsActorsQuery', funnelStep: 1 } } }, 'query__source'],
      [actorsQuery(1, { select: 'person' }), 'query__select'],
      [actorsQuery(1, { limit: -1 }), 'query__limit'],
      [actorsQuery(1, { search: { x: 1 } }), 'query__search'],
      [{ query: { kind: 'ActorsQuery', source: { ...source, funnelStep: 1, funnelStepBreakdown: { a: 1 } } } }, 'query__source__funnelStepBreakdown'],
      [{ query: { kind: 'ActorsQuery', source: { ...source, funnelCustomSteps: 'x' } } }, 'query__source__funnelCustomSteps'],
      [actorsQuery(null), 'query__source__funnelStep'],
    ];
    for (const [body, attr] of malformed) {
      const res = await request(f.app).post('/api/environments/1/query/').set(admin).send(body);
      expect({ status: res.status, attr: res.body.attr }).toEqual({ status: 400, attr });
    }
  });
});
