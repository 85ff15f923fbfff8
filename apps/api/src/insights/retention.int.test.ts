import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-20T12:00:00Z');
const DAY = 86_400_000;

/**
 * Three persons sign up on 2024-01-14 (Sunday) and one on 2024-01-15; their pageviews over the
 * next days. Expected cells from PostHog's rules (retention_query_runner.py): a row per start day,
 * offset 0 is the cohort, offset n the actors back n days later.
 */
const PLAN: { id: string; signup: number; visits: number[] }[] = [
  { id: 'r1', signup: 0, visits: [1, 2] },
  { id: 'r2', signup: 0, visits: [2] },
  { id: 'r3', signup: 0, visits: [] },
  { id: 'r4', signup: 1, visits: [1, 2] },
];
const START = Date.parse('2024-01-14T10:00:00Z');

describe('retention endpoints: insights/retention/, RetentionQuery on /query/, persons/retention/', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  const uuids: Record<string, string> = {};
  const legacy = {
    target_entity: { id: 'signed up', type: 'events' },
    returning_entity: { id: '$pageview', type: 'events' },
    period: 'Day',
    total_intervals: 4,
    date_to: '2024-01-17',
  };
  const retentionQuery = {
    kind: 'RetentionQuery',
    dateRange: { date_to: '2024-01-17' },
    retentionFilter: {
      targetEntity: { id: 'signed up', type: 'events' },
      returningEntity: { id: '$pageview', type: 'events' },
      period: 'Day',
      totalIntervals: 4,
    },
  };
  const EXPECTED = [
    [3, 1, 2, 0],
    [1, 1, 1, 0],
    [0, 0, 0, 0],
    [0, 0, 0, 0],
  ];
  const counts = (rows: { values: { count: number }[] }[]) => rows.map((r) => r.values.map((v) => v.count));

  beforeAll(async () => {
    f = await createFlagFixture('retention-api', () => NOW);
    for (const p of PLAN) {
      const person = await createTestPerson(f, { distinctIds: [p.id], properties: { email: `${p.id}@example.com` } });
      uuids[p.id] = person.uuid;
      await insertEvents(f.ch, [
        testEventRow({ event: 'signed up', atMs: START + p.signup * DAY, distinctId: p.id, personId: person.uuid }),
        ...p.visits.map((d) => testEventRow({ event: '$pageview', atMs: START + (p.signup + d) * DAY, distinctId: p.id, personId: person.uuid })),
      ]);
    }
  });
  afterAll(() => f.close());

  it('answers the legacy POST and GET and the query API alike', async () => {
    const post = await request(f.app).post('/api/projects/1/insights/retention/').set(admin).send(legacy);
    expect(post.status).toBe(200);
    expect(counts(post.body.result)).toEqual(EXPECTED);
    expect(post.body.result[0]).toMatchObject({ label: 'Day 0', date: '2024-01-14T00:00:00Z' });
    expect(post.body.timezone).toBe('UTC');
    const query = Object.fromEntries(Object.entries(legacy).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]));
    const get = await request(f.app).get('/api/environments/1/insights/retention/').query(query).set(admin);
    expect(get.status).toBe(200);
    expect(counts(get.body.result)).toEqual(EXPECTED);
    const node = await request(f.app).post('/api/environments/1/query/').set(admin).send({ query: retentionQuery });
    expect(node.status).toBe(200);
    expect(node.body.results).toEqual(post.body.result.map(({ people_url: _url, ...row }: { people_url: string }) => row));
  });

  it("lists a row's persons through its people_url and as an ActorsQuery, most appearances first", async () => {
    const post = await request(f.app).post('/api/projects/1/insights/retention/').set(admin).send(legacy);
    const url = new URL(post.body.result[0].people_url as string);
    expect(url.pathname).toBe('/api/projects/1/persons/retention/');
    const people = await request(f.app).get(url.pathname).query(Object.fromEntries(url.searchParams)).set(admin);
    expect(people.status).toBe(200);
    expect(people.body.result.map((r: { person: { uuid: string } }) => r.person.uuid)).toEqual([uuids['r1'], uuids['r2'], uuids['r3']]);
    expect(people.body.result[0].appearances).toEqual([1, 1, 1, 0]);
    const actors = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'ActorsQuery', select: ['person', 'appearances'], source: { kind: 'InsightActorsQuery', interval: 1, source: retentionQuery } } });
    expect(actors.status).toBe(200);
    expect(actors.body.columns).toEqual(['person', 'appearances']);
    expect(actors.body.results).toEqual([[expect.objectContaining({ id: uuids['r4'] }), [0, 1, 2]]]);
  });

  it('is a saved insight and a dashboard tile: its query node, or legacy filters with insight RETENTION', async () => {
    const dashboard = await request(f.app).post('/api/environments/1/dashboards/').set(admin).send({ name: 'Retention' });
    expect(dashboard.status).toBe(201);
    const saved = await request(f.app)
      .post('/api/environments/1/insights/')
      .set(admin)
      .send({ name: 'Sign-up retention', query: { kind: 'InsightVizNode', source: retentionQuery }, saved: true, dashboards: [dashboard.body.id] });
    expect(saved.status).toBe(201);
    const read = await request(f.app).get(`/api/environments/1/insights/${saved.body.id}/`).set(admin);
    expect(counts(read.body.result)).toEqual(EXPECTED);
    const legacyInsight = await request(f.app)
      .post('/api/environments/1/insights/')
      .set(admin)
      .send({ name: 'Legacy retention', filters: { insight: 'RETENTION', ...legacy }, saved: true });
    expect(legacyInsight.status).toBe(201);
    expect(counts((await request(f.app).get(`/api/environments/1/insights/${legacyInsight.body.id}/`).set(admin)).body.result)).toEqual(EXPECTED);
    const tiles = (await request(f.app).get(`/api/environments/1/dashboards/${dashboard.body.id}/`).set(admin)).body.tiles;
    expect(tiles.map((t: { insight: { result: { values: { count: number }[] }[] } }) => counts(t.insight.result))).toEqual([EXPECTED]);
  });

  it('refuses a bad filter with a DRF 400 naming the field', async () => {
    const bad = await request(f.app)
      .post('/api/projects/1/insights/retention/')
      .set(admin)
      .send({ ...legacy, period: 'Fortnight' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'validation_error', attr: 'period', code: 'invalid_choice' });
    const cells = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({
        query: { ...retentionQuery, dateRange: { date_from: '2000-01-01', date_to: '2024-01-17' }, retentionFilter: { period: 'Hour', totalIntervals: 100 } },
      });
    expect(cells.status).toBe(400);
    expect(cells.body.attr).toBe('date_from');
    const noInterval = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: retentionQuery } } });
    expect(noInterval.status).toBe(400);
    expect(noInterval.body.code).toBe('required');
    const legacyPeople = await request(f.app).get('/api/projects/1/persons/retention/').query({ period: 'Day' }).set(admin);
    expect(legacyPeople.status).toBe(400);
    expect(legacyPeople.body).toMatchObject({ attr: 'selected_interval', code: 'required' });
  });
});
