import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const MINUTE = 60_000;
const person = (i: number) => `00000000-0000-4000-8000-00000000000${i}`;

/**
 * The paths endpoints: PostHog's legacy insights/path/ (posthog/api/insight.py `path`), PathsQuery
 * on /query/ and the persons on an edge (ActorsQuery of an InsightActorsQuery), one answer for
 * the same filter, never another project's events.
 */
describe('insights/path/ and PathsQuery on /query/', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);

  beforeAll(async () => {
    f = await createFlagFixture('paths-api', () => NOW);
    const visit = (i: number, urls: string[], teamId = 1) =>
      urls.map((url, k) =>
        testEventRow({
          event: '$pageview',
          teamId,
          atMs: NOW - 3_600_000 + k * MINUTE * (i + 1),
          distinctId: `u${i}`,
          personId: person(i),
          properties: { $current_url: url },
        }),
      );
    await insertEvents(f.ch, [
      ...visit(0, ['/', '/pricing', '/signup']),
      ...visit(1, ['/', '/pricing']),
      ...visit(2, ['/', '/docs/']),
      // Another project's visitor takes the same first step: never counted here.
      ...visit(3, ['/', '/pricing'], 2),
    ]);
  });
  afterAll(() => f.close());

  const expected = [
    { source: '1_/', target: '2_/pricing', value: 2, average_conversion_time: 1.5 * MINUTE },
    { source: '1_/', target: '2_/docs', value: 1, average_conversion_time: 3 * MINUTE },
    { source: '2_/pricing', target: '3_/signup', value: 1, average_conversion_time: MINUTE },
  ];

  it('answers the legacy filter (POST and GET) and the PathsQuery node alike', async () => {
    const post = await request(f.app)
      .post('/api/projects/1/insights/path/')
      .set(admin)
      .send({ insight: 'PATHS', include_event_types: ['$pageview'] });
    expect(post.status).toBe(200);
    expect(post.body).toMatchObject({ result: expected, timezone: 'UTC', is_cached: false, timings: [] });
    const get = await request(f.app)
      .get('/api/environments/1/insights/path/')
      .query({ include_event_types: JSON.stringify(['$pageview']), path_groupings: JSON.stringify(['/docs*']) })
      .set(admin);
    expect(get.status).toBe(200);
    expect(get.body.result[1]).toMatchObject({ source: '1_/', target: '2_/docs*', value: 1 });
    const query = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['$pageview'] } } });
    expect(query.status).toBe(200);
    expect(query.body).toMatchObject({ results: expected, timezone: 'UTC' });
  });

  it('lists the persons on an edge and those dropping off, as an ActorsQuery', async () => {
    const actors = (keys: Record<string, string>) =>
      request(f.app)
        .post('/api/environments/1/query/')
        .set(admin)
        .send({
          query: {
            kind: 'ActorsQuery',
            select: ['id'],
            source: { kind: 'InsightActorsQuery', source: { kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['$pageview'], ...keys } } },
          },
        });
    const edge = await actors({ pathStartKey: '1_/', pathEndKey: '2_/pricing' });
    expect(edge.status).toBe(200);
    expect(edge.body).toMatchObject({ columns: ['id'], results: [[person(0)], [person(1)]], hasMore: false, limit: 100, offset: 0 });
    expect((await actors({ pathDropoffKey: '2_/pricing' })).body.results).toEqual([[person(1)]]);
  });

  it('answers the legacy persons/path/ (PostHog ee/clickhouse/views/person.py `path`)', async () => {
    const res = await request(f.app)
      .get('/api/projects/1/persons/path/')
      .query({ include_event_types: JSON.stringify(['$pageview']), path_start_key: '1_/', path_end_key: '2_/pricing', limit: '1' })
      .set(admin);
    expect(res.status).toBe(200);
    expect(res.body.results[0].people.map((p: { id: string }) => p.id)).toEqual([person(0)]);
    expect(res.body.next).toContain('offset=1');
    const dropoff = await request(f.app)
      .post('/api/environments/1/persons/path/')
      .set(admin)
      .send({ include_event_types: ['$pageview'], path_dropoff_key: '3_/signup' });
    expect(dropoff.body.results[0]).toMatchObject({ count: 1, people: [{ id: person(0) }] });
  });

  it('runs a saved PATHS insight', async () => {
    const created = await request(f.app)
      .post('/api/projects/1/insights/')
      .set(admin)
      .send({ name: 'Paths', filters: { insight: 'PATHS', include_event_types: ['$pageview'] } });
    expect(created.status).toBe(201);
    const read = await request(f.app).get(`/api/projects/1/insights/${created.body.id}/`).set(admin);
    expect(read.body.result).toEqual(expected);
  });

  it('refuses bad input with a DRF 400 naming the field', async () => {
    const bad = await request(f.app)
      .post('/api/projects/1/insights/path/')
      .set(admin)
      .send({ local_path_cleaning_filters: [{ regex: '(?=x)', alias: 'y' }] });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'validation_error', code: 'invalid_regex', attr: 'local_path_cleaning_filters__0' });
    const badKey = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind: 'PathsQuery', pathsFilter: { pathEndKey: 5 } } } } });
    expect(badKey.status).toBe(400);
    expect(badKey.body.attr).toBe('query__source__source__pathsFilter__pathEndKey');
  });
});
