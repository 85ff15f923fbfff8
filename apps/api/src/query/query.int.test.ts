import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const HOUR = 3_600_000;

describe('POST /query/ runs TrendsQuery, FunnelsQuery and EventsQuery on the insight engines', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);

  beforeAll(async () => {
    f = await createFlagFixture('query-api', () => NOW);
    await f.addKey('phx_no_query', ['insight:read']);
    await insertEvents(
      f.ch,
      ['a', 'b', 'c'].flatMap((user, i) => {
        // One person per user, as the worker would have written them.
        const personId = `00000000-0000-4000-8000-00000000000${i}`;
        return [
          testEventRow({ event: 'visit', atMs: NOW - (i + 1) * 24 * HOUR, distinctId: user, personId, properties: { $browser: i ? 'Firefox' : 'Chrome' } }),
          ...(i < 2 ? [testEventRow({ event: 'pay', atMs: NOW - (i + 1) * 24 * HOUR + HOUR, distinctId: user, personId })] : []),
        ];
      }),
    );
    // Between visit and pay, "browse" by a (converted) and c (dropped off); in project 2 by someone else.
    await insertEvents(f.ch, [
      testEventRow({ event: 'browse', atMs: NOW - 24 * HOUR + HOUR / 2, distinctId: 'a', personId: '00000000-0000-4000-8000-000000000000' }),
      testEventRow({ event: 'browse', atMs: NOW - 3 * 24 * HOUR + HOUR / 2, distinctId: 'c', personId: '00000000-0000-4000-8000-000000000002' }),
      ...['visit', 'browse'].map((event, k) =>
        testEventRow({ event, teamId: 2, atMs: NOW - 24 * HOUR + k * 60_000, distinctId: 'z', personId: '00000000-0000-4000-8000-000000000009' }),
      ),
    ]);
  });
  afterAll(() => f.close());

  it('answers a TrendsQuery (bare or in an InsightVizNode) as the legacy endpoint does', async () => {
    const trendsQuery = {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: 'visit', math: 'total' }],
      dateRange: { date_from: '-7d' },
      interval: 'day',
      breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
      trendsFilter: { display: 'ActionsTable' },
    };
    const legacy = await request(f.app)
      .post('/api/environments/1/insights/trend/')
      .set(admin)
      .send({ events: [{ id: 'visit', math: 'total' }], date_from: '-7d', breakdown: '$browser', display: 'ActionsTable' });
    for (const query of [trendsQuery, { kind: 'InsightVizNode', source: trendsQuery }, JSON.stringify(trendsQuery)]) {
      const res = await request(f.app).post('/api/environments/1/query/').set(admin).send({ query });
      expect(res.status).toBe(200);
      expect(res.body.results.map((s: { breakdown_value: string; aggregated_value: number }) => [s.breakdown_value, s.aggregated_value])).toEqual(
        legacy.body.result.map((s: { breakdown_value: string; aggregated_value: number }) => [s.breakdown_value, s.aggregated_value]),
      );
      expect(res.body).toMatchObject({ timezone: 'UTC', resolved_date_range: { date_from: '2024-01-03T00:00:00Z' } });
    }
  });

  it('answers a FunnelsQuery', async () => {
    const res = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({
        query: {
          kind: 'FunnelsQuery',
          series: [
            { kind: 'EventsNode', event: 'visit' },
            { kind: 'EventsNode', event: 'pay' },
          ],
          dateRange: { date_from: '-7d' },
          funnelsFilter: { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' },
        },
      });
    expect(res.status).toBe(200);
    expect(res.body.results.map((s: { count: number }) => s.count)).toEqual([3, 2]);
  });

  it('takes optional funnel steps (optionalInFunnel), and refuses them where PostHog does with a 400', async () => {
    const funnel = (series: Record<string, unknown>[], funnelsFilter: Record<string, unknown> = {}) =>
      request(f.app)
        .post('/api/environments/1/query/')
        .set(admin)
        .send({ query: { kind: 'FunnelsQuery', series: series.map((s) => ({ kind: 'EventsNode', ...s })), dateRange: { date_from: '-7d' }, funnelsFilter } });
    // Nobody sends "missing": the optional step is skipped on the way to pay.
    const res = await funnel([{ event: 'visit' }, { event: 'missing', optionalInFunnel: true }, { event: 'pay' }]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((s: { count: number }) => s.count)).toEqual([3, 0, 2]);
    const firstOptional = await funnel([{ event: 'visit', optionalInFunnel: true }, { event: 'pay' }]);
    expect(firstOptional.status).toBe(400);
    expect(firstOptional.body).toMatchObject({
      type: 'validation_error',
      code: 'funnel_optional_steps_invalid',
      detail: 'The first step of a funnel cannot be optional.',
    });
    const unordered = await funnel([{ event: 'visit' }, { event: 'pay', optionalInFunnel: true }], { funnelOrderType: 'unordered' });
    expect(unordered.status).toBe(400);
    expect(unordered.body).toMatchObject({ code: 'funnel_optional_steps_invalid' });
  });

  it('answers an ActorsQuery of a FunnelCorrelationActorsQuery: the persons behind a correlation row', async () => {
    const correlationActors = (node: Record<string, unknown>, select: unknown = ['id']) =>
      request(f.app)
        .post('/api/environments/1/query/')
        .set(admin)
        .send({
          query: {
            kind: 'ActorsQuery',
            select,
            source: {
              kind: 'FunnelCorrelationActorsQuery',
              source: {
                kind: 'FunnelCorrelationQuery',
                funnelCorrelationType: 'events',
                source: {
                  kind: 'FunnelsActorsQuery',
                  source: {
                    kind: 'FunnelsQuery',
                    series: [
                      { kind: 'EventsNode', event: 'visit' },
                      { kind: 'EventsNode', event: 'pay' },
                    ],
                    dateRange: { date_from: '-7d' },
                    funnelsFilter: { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' },
                  },
                },
              },
              ...node,
            },
          },
        });
    const browse = { kind: 'EventsNode', event: 'browse' };
    const converted = await correlationActors({ funnelCorrelationPersonConverted: true, funnelCorrelationPersonEntity: browse });
    expect(converted.status).toBe(200);
    expect(converted.body).toMatchObject({ columns: ['id'], results: [['00000000-0000-4000-8000-000000000000']], hasMore: false, limit: 100, offset: 0 });
    const dropped = await correlationActors({ funnelCorrelationPersonConverted: false, funnelCorrelationPersonEntity: browse });
    expect(dropped.body.results).toEqual([['00000000-0000-4000-8000-000000000002']]);
    // Both sides, and never project 2's person who also browsed.
    const both = await correlationActors({ funnelCorrelationPersonEntity: browse });
    expect(both.body.results.flat().sort()).toEqual(['00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000002']);
    const noEntity = await correlationActors({ funnelCorrelationPersonConverted: true });
    expect(noEntity.status).toBe(400);
    expect(noEntity.body).toMatchObject({ type: 'validation_error', attr: 'query__source__funnelCorrelationPersonEntity', code: 'required' });
    const badSelect = await correlationActors({ funnelCorrelationPersonEntity: browse }, ['person.properties.email']);
    expect(badSelect.body).toMatchObject({ attr: 'query__select', code: 'not_supported' });
  });

  it('answers an EventsQuery, and its rows as CSV with format=csv (query string or body)', async () => {
    const eventsQuery = {
      kind: 'EventsQuery',
      select: ['event', 'properties.$browser', 'count()'],
      after: '-7d',
      orderBy: ['event ASC', 'properties.$browser ASC'],
    };
    const res = await request(f.app).post('/api/environments/1/query/').set(admin).send({ query: eventsQuery });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      columns: ['event', 'properties.$browser', 'count()'],
      types: ['String', 'Nullable(String)', 'UInt64'],
      results: [
        ['browse', null, 2],
        ['pay', null, 2],
        ['visit', 'Chrome', 1],
        ['visit', 'Firefox', 2],
      ],
      hasMore: false,
      limit: 100,
      offset: 0,
    });
    const expected = 'event,properties.$browser,count()\r\nbrowse,,2\r\npay,,2\r\nvisit,Chrome,1\r\nvisit,Firefox,2\r\n';
    for (const [path, body] of [
      ['/api/environments/1/query/?format=csv', { query: eventsQuery }],
      ['/api/projects/1/query/', { query: eventsQuery, format: 'csv' }],
    ] as const) {
      const csv = await request(f.app).post(path).set(admin).send(body);
      expect(csv.status).toBe(200);
      expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(csv.text).toBe(expected);
    }
  });

  it('reads the events fields uuid, created_at, person_mode, $session_id and the stored creation times, in EventsQuery and HogQLQuery alike', async () => {
    // Twenty days back: outside every other case's window.
    const atMs = NOW - 20 * 24 * HOUR;
    const uuid = '0186a3d2-0000-4000-8000-00000000f1e1';
    await insertEvents(f.ch, [
      testEventRow({ event: 'fields', atMs, uuid, distinctId: 'f', properties: { $session_id: 's-1', $window_id: 'w-1', $process_person_profile: false } }),
      testEventRow({ event: 'fields', atMs: atMs + 1000, distinctId: 'g' }),
    ]);
    const fields = ['uuid', 'created_at', 'person_mode', '$session_id', '$window_id', 'person.created_at', 'group_0.created_at'];
    const expected = [uuid, new Date(atMs).toISOString().replace('.000Z', 'Z'), 'propertyless', 's-1', 'w-1', '1970-01-01T00:00:00Z', '1970-01-01T00:00:00Z'];
    const events = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({
        query: {
          kind: 'EventsQuery',
          select: fields,
          after: '-30d',
          event: 'fields',
          where: [`uuid = '${uuid}'`, `created_at < '${new Date(atMs + 1).toISOString()}'`],
          orderBy: ['created_at DESC'],
        },
      });
    expect(events.body.detail).toBeUndefined();
    expect(events.body).toMatchObject({ columns: fields, results: [expected] });
    expect(events.body.types.slice(0, 3)).toEqual(['UUID', "DateTime64(6, 'UTC')", "Enum8('full' = 0, 'propertyless' = 1, 'force_upgrade' = 2)"]);
    const hogql = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query: `SELECT ${fields.join(', ')} FROM events WHERE event = 'fields' AND uuid = {id}`, values: { id: uuid } } });
    expect(hogql.body.detail).toBeUndefined();
    expect(hogql.body.results).toEqual([expected]);
  });

  it('writes a HogQLQuery`s rows as CSV, and its error as the DRF 400', async () => {
    const csv = await request(f.app)
      .post('/api/environments/1/query/?format=csv')
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query: "SELECT event, count() AS n FROM events WHERE event IN ('visit', 'pay') GROUP BY event ORDER BY event" } });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.text).toBe('event,n\r\npay,2\r\nvisit,3\r\n');
    const bad = await request(f.app)
      .post('/api/environments/1/query/?format=csv')
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query: 'SELECT * FROM evnts' } });
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^application\/json/);
    expect(bad.body).toMatchObject({ type: 'validation_error', detail: expect.stringContaining("Unknown table 'evnts' at 14") });
  });

  it('writes CSV cells as RFC 4180 has them and never as a formula a spreadsheet would run', async () => {
    await insertEvents(f.ch, [
      testEventRow({ event: 'csv', atMs: NOW - HOUR, distinctId: 'q', properties: { note: '=HYPERLINK("http://x","a, b")', line: 'one\ntwo' } }),
    ]);
    const csv = await request(f.app)
      .post('/api/environments/1/query/?format=csv')
      .set(admin)
      .send({ query: { kind: 'EventsQuery', select: ['properties.note', 'properties.line', '-1', 'person'], event: 'csv' } });
    expect(csv.status).toBe(200);
    expect(csv.text).toBe('properties.note,properties.line,"\'-1",person\r\n"\'=HYPERLINK(""http://x"",""a, b"")","one\ntwo",-1,"{""distinct_id"":""q""}"\r\n');
  });

  it('refuses format=csv for a kind that answers no rows, and an unknown format, with a 400', async () => {
    const trends = await request(f.app)
      .post('/api/environments/1/query/?format=csv')
      .set(admin)
      .send({ query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'visit' }] } });
    expect(trends.status).toBe(400);
    expect(trends.body).toMatchObject({ type: 'validation_error', attr: 'format', code: 'not_supported' });
    const xml = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'EventsQuery' }, format: 'xml' });
    expect(xml.status).toBe(400);
    expect(xml.body).toMatchObject({ attr: 'format', code: 'invalid_choice' });
  });

  it('refuses what it cannot run with a 400, and needs query:read', async () => {
    const unknown = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'SessionsTimelineQuery' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ attr: 'query', code: 'not_supported' });
    expect((await request(f.app).post('/api/environments/1/query/').set(admin).send({})).body).toMatchObject({ attr: 'query', code: 'required' });
    const bad = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'visit', math: 'p42' }] } });
    expect(bad.body).toMatchObject({ code: 'invalid_choice' });
    expect(
      (
        await request(f.app)
          .post('/api/environments/1/query/')
          .set(bearer('phx_no_query'))
          .send({ query: { kind: 'TrendsQuery' } })
      ).status,
    ).toBe(403);
  });
});
