import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import request from 'supertest';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const T0 = Date.parse('2026-03-02T10:00:00Z');

describe('GET /api/environments/:id/events/', () => {
  let f: FlagFixture;
  let teamId: number;
  beforeAll(async () => {
    f = await createFlagFixture('events_list', () => T0 + 3600_000);
    [{ id: teamId }] = (await f.db.query<{ id: number }>('SELECT id FROM projects ORDER BY id LIMIT 1')) as [{ id: number }];
    const rows = [];
    // 25 pageviews one second apart, the last five at the same instant (ties broken by uuid).
    for (let i = 0; i < 25; i++) {
      rows.push(
        testEventRow({
          event: '$pageview',
          atMs: T0 + Math.min(i, 20) * 1000,
          teamId,
          distinctId: i % 2 ? 'odd' : 'even',
          properties: { n: i, plan: i < 5 ? 'pro' : 'free' },
          personProperties: { email: i % 2 ? 'odd@example.com' : 'even@example.com' },
        }),
      );
    }
    rows.push(testEventRow({ event: 'signed_up', atMs: T0 + 30_000, teamId, distinctId: 'even', properties: { n: 99 } }));
    rows.push(testEventRow({ event: 'other_team', atMs: T0 + 31_000, teamId: teamId + 1000 }));
    await insertEvents(f.ch, rows);
    // The same event delivered twice is listed once.
    await insertEvents(f.ch, [rows[25]!]);
  });
  afterAll(() => f.close());

  const list = (query = '') => request(f.app).get(`/api/environments/${teamId}/events/${query}`).set(bearer(ADMIN_KEY));

  it("lists the project's events newest first, each once", async () => {
    const res = await list().expect(200);
    expect(res.body.next).toBeNull();
    expect(res.body.results).toHaveLength(26);
    expect(res.body.results[0]).toMatchObject({ event: 'signed_up', distinct_id: 'even', properties: { n: 99 }, timestamp: '2026-03-02T10:00:30.000000Z' });
    const times = res.body.results.map((e: { timestamp: string }) => e.timestamp);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('pages with a cursor without overlap or gaps, also across equal timestamps', async () => {
    const seen: string[] = [];
    let url: string | null = `/api/environments/${teamId}/events/?limit=4`;
    let pages = 0;
    while (url) {
      const res: request.Response = await request(f.app)
        .get(url.replace(/^https?:\/\/[^/]+/, ''))
        .set(bearer(ADMIN_KEY))
        .expect(200);
      seen.push(...res.body.results.map((e: { id: string }) => e.id));
      url = res.body.next as string | null;
      pages++;
    }
    expect(pages).toBe(7);
    expect(new Set(seen).size).toBe(26);
    const all = (await list().expect(200)).body.results.map((e: { id: string }) => e.id);
    expect(seen).toEqual(all);
  });

  it('filters by event, distinct id, event and person properties, and time', async () => {
    expect((await list('?event=signed_up').expect(200)).body.results).toHaveLength(1);
    expect((await list('?distinct_id=odd').expect(200)).body.results).toHaveLength(12);
    const pro = encodeURIComponent(JSON.stringify([{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }]));
    expect((await list(`?properties=${pro}`).expect(200)).body.results).toHaveLength(5);
    const odd = encodeURIComponent(JSON.stringify([{ key: 'email', value: 'odd@example.com', operator: 'exact', type: 'person' }]));
    expect((await list(`?properties=${odd}&event=$pageview`).expect(200)).body.results).toHaveLength(12);
    const [person] = await f.db.query<{ uuid: string }>(`INSERT INTO persons (team_id, uuid) VALUES ($1, gen_random_uuid()) RETURNING uuid`, [teamId]);
    const [{ id }] = (await f.db.query<{ id: number }>('SELECT id FROM persons WHERE uuid = $1', [person!.uuid])) as [{ id: number }];
    await f.db.query(`INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'odd', $2), ($1, 'even', $2)`, [teamId, id]);
    expect((await list(`?person_id=${person!.uuid}`).expect(200)).body.results).toHaveLength(26);
    expect((await list('?person_id=00000000-0000-4000-8000-000000000000').expect(200)).body.results).toHaveLength(0);
    expect((await list('?person_id=nope').expect(400)).body).toMatchObject({ attr: 'person_id' });
    const after = encodeURIComponent(new Date(T0 + 20_000).toISOString());
    expect((await list(`?after=${after}`).expect(200)).body.results).toHaveLength(6);
  });

  it('answers bad input with DRF 400s', async () => {
    expect((await list('?cursor=bogus').expect(400)).body).toMatchObject({ type: 'validation_error', attr: 'cursor' });
    expect((await list('?properties=not-json').expect(400)).body).toMatchObject({ code: 'parse_error', attr: 'properties' });
    expect((await list('?after=yesterday-ish').expect(400)).body).toMatchObject({ attr: 'after' });
    const cohort = encodeURIComponent(JSON.stringify([{ key: 'id', value: 1, type: 'cohort' }]));
    expect((await list(`?properties=${cohort}`).expect(400)).body.type).toBe('validation_error');
    await request(f.app).get(`/api/environments/${teamId}/events/`).expect(401);
  });
  // PostHog's EventViewSet.values (posthog/queries/property_values.py): the last 7 days, `value`
  // searched in the query, at most 10; here with each value's count, most common first.
  it('answers the values of an event property, searched and capped server-side', async () => {
    const values = (query: string) => request(f.app).get(`/api/projects/${teamId}/events/values/${query}`).set(bearer(ADMIN_KEY));
    const many = Array.from({ length: 12 }, (_, i) =>
      testEventRow({ event: 'tagged', atMs: T0 + i, teamId, properties: { tag: `t${String(i).padStart(2, '0')}` } }),
    );
    const old = testEventRow({ event: '$pageview', atMs: T0 - 9 * 86_400_000, teamId, properties: { plan: 'ancient' } });
    await insertEvents(f.ch, [...many, old]);
    expect((await values('?key=plan').expect(200)).body).toEqual([
      { name: 'free', count: 20 },
      { name: 'pro', count: 5 },
    ]);
    expect((await values('?key=plan&value=PR').expect(200)).body).toEqual([{ name: 'pro', count: 5 }]);
    expect((await values('?key=plan&event_name=signed_up').expect(200)).body).toEqual([]);
    expect((await values('?key=n&event_name=signed_up&event_name=other').expect(200)).body).toEqual([{ name: '99', count: 1 }]);
    expect((await values('?key=tag').expect(200)).body).toHaveLength(10);
    expect((await values('?key=tag&value=t11').expect(200)).body).toEqual([{ name: 't11', count: 1 }]);
    expect((await values('').expect(400)).body).toMatchObject({ type: 'validation_error', attr: 'key' });
  });
});
