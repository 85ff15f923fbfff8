import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const DAY = 86_400_000;

describe('stickiness and lifecycle on insights/trend/ (shown_as, insight) and POST /query/', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);

  beforeAll(async () => {
    f = await createFlagFixture('stick-life-api', () => NOW);
    // a: three days of the last eight; b: one day; c: only before the range.
    const person = (i: number) => `00000000-0000-4000-8000-00000000000${i}`;
    await insertEvents(f.ch, [
      ...[0, 1, 3].map((d) => testEventRow({ event: 'visit', atMs: NOW - d * DAY, distinctId: 'a', personId: person(1) })),
      testEventRow({ event: 'visit', atMs: NOW - DAY, distinctId: 'b', personId: person(2) }),
      testEventRow({ event: 'visit', atMs: NOW - 30 * DAY, distinctId: 'c', personId: person(3) }),
    ]);
  });
  afterAll(() => f.close());

  const expected = { data: [1, 0, 1, 0, 0, 0, 0, 0], count: 2, days: [1, 2, 3, 4, 5, 6, 7, 8], label: 'visit' };

  it('answers `shown_as: "Stickiness"` (POST and GET) and `insight: "STICKINESS"` with the stickiness series', async () => {
    const body = { events: [{ id: 'visit' }], date_from: '-7d' };
    const post = await request(f.app)
      .post('/api/environments/1/insights/trend/')
      .set(admin)
      .send({ ...body, shown_as: 'Stickiness' });
    expect(post.status).toBe(200);
    expect(post.body.result[0]).toMatchObject({ ...expected, labels: expect.arrayContaining(['1 day', '8 days']) });
    expect(post.body).toMatchObject({ timezone: 'UTC', is_cached: false });

    const get = await request(f.app)
      .get('/api/projects/1/insights/trend/')
      .set(admin)
      .query({ events: JSON.stringify(body.events), date_from: '-7d', insight: 'STICKINESS' });
    expect(get.status).toBe(200);
    expect(get.body.result[0]).toMatchObject(expected);

    // The same filter without shown_as is a trend: days are dates.
    const trend = await request(f.app).post('/api/environments/1/insights/trend/').set(admin).send(body);
    expect(trend.body.result[0].days[0]).toBe('2024-01-03');
  });

  it('answers a StickinessQuery (bare or in an InsightVizNode) on /query/ as the legacy endpoint does', async () => {
    const query = { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'visit' }], dateRange: { date_from: '-7d' }, interval: 'day' };
    for (const node of [query, { kind: 'InsightVizNode', source: query }]) {
      const res = await request(f.app).post('/api/environments/1/query/').set(admin).send({ query: node });
      expect(res.status).toBe(200);
      expect(res.body.results[0]).toMatchObject(expected);
      expect(res.body).toMatchObject({ timezone: 'UTC', is_cached: expect.any(Boolean) });
    }
  });

  it('refuses a bad stickiness field with a DRF 400 naming it', async () => {
    const bad = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({
        query: {
          kind: 'StickinessQuery',
          series: [{ kind: 'EventsNode', event: 'visit' }],
          stickinessFilter: { stickinessCriteria: { operator: 'near', value: 1 } },
        },
      });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'validation_error', attr: 'stickinessFilter__stickinessCriteria__operator' });
    const interval = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'visit' }], intervalCount: 0 } });
    expect(interval.status).toBe(400);
    expect(interval.body.attr).toBe('intervalCount');
  });

  // a: active the 7th, 9th and 10th (persons without a copy count from no creation: resurrecting);
  // b: the 9th only.
  const lifecycle = {
    new: [0, 0, 0, 0, 0, 0, 0, 0],
    returning: [0, 0, 0, 0, 0, 0, 0, 1],
    resurrecting: [0, 0, 0, 0, 1, 0, 2, 0],
    dormant: [0, 0, 0, 0, 0, -1, 0, -1],
  };
  const byStatus = (results: { status: string; data: number[] }[]) => Object.fromEntries(results.map((r) => [r.status, r.data]));

  it('answers `shown_as: "Lifecycle"` and `insight: "LIFECYCLE"` on insights/trend/, and a LifecycleQuery on /query/, alike', async () => {
    const body = { events: [{ id: 'visit' }], date_from: '-7d' };
    const post = await request(f.app)
      .post('/api/environments/1/insights/trend/')
      .set(admin)
      .send({ ...body, shown_as: 'Lifecycle' });
    expect(post.status).toBe(200);
    expect(byStatus(post.body.result)).toEqual(lifecycle);
    expect(post.body.result[0]).toMatchObject({ label: 'visit - new', days: expect.arrayContaining(['2024-01-03', '2024-01-10']) });
    const get = await request(f.app)
      .get('/api/projects/1/insights/trend/')
      .set(admin)
      .query({ events: JSON.stringify(body.events), date_from: '-7d', insight: 'LIFECYCLE' });
    expect(byStatus(get.body.result)).toEqual(lifecycle);
    const query = {
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: 'visit' }],
      dateRange: { date_from: '-7d' },
      lifecycleFilter: { toggledLifecycles: ['new'] },
    };
    const res = await request(f.app).post('/api/environments/1/query/').set(admin).send({ query });
    expect(res.status).toBe(200);
    // toggledLifecycles is what a chart shows: every status is answered, as PostHog does.
    expect(byStatus(res.body.results)).toEqual(lifecycle);
    expect(res.body.resolved_date_range).toEqual({ date_from: '2024-01-03T00:00:00Z', date_to: '2024-01-10T23:59:59.999999Z' });
    const bad = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { ...query, lifecycleFilter: { toggledLifecycles: ['gone'] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.attr).toBe('lifecycleFilter__toggledLifecycles');
  });
});
