import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');

describe('a dashboard’s tiles, computed on retrieve', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  let clock = NOW;
  const trend = { insight: 'TRENDS', events: [{ id: 'signup', math: 'total' }], date_from: '-7d' };
  const funnel = {
    insight: 'FUNNELS',
    events: [
      { id: 'signup', order: 0 },
      { id: 'paid', order: 1 },
    ],
    date_from: '-7d',
  };

  beforeAll(async () => {
    f = await createFlagFixture('dashboard-tiles', () => clock);
    await insertEvents(f.ch, [
      testEventRow({ event: 'signup', atMs: NOW - 3_600_000, distinctId: 'a', personId: '00000000-0000-4000-8000-00000000000a' }),
      testEventRow({ event: 'paid', atMs: NOW - 1_800_000, distinctId: 'a', personId: '00000000-0000-4000-8000-00000000000a' }),
      testEventRow({ event: 'signup', atMs: NOW - 86_400_000, distinctId: 'b', personId: '00000000-0000-4000-8000-00000000000b' }),
    ]);
  });
  afterAll(() => f.close());

  const save = async (body: Record<string, unknown>) => {
    const res = await request(f.app).post('/api/environments/1/insights/').set(admin).send(body);
    expect(res.status).toBe(201);
    return res.body as { id: number };
  };

  it('answers each tile’s result as its insight computes it, from the cache until refreshed', async () => {
    const dashboard = (await request(f.app).post('/api/environments/1/dashboards/').set(admin).send({ name: 'Growth' })).body as { id: number };
    const trendInsight = await save({ name: 'Signups', filters: trend, dashboards: [dashboard.id] });
    const funnelInsight = await save({ name: 'Signup to paid', filters: funnel, dashboards: [dashboard.id] });

    const read = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).set(admin);
    expect(read.status).toBe(200);
    const tile = (id: number, body = read.body) => body.tiles.find((t: { insight: { id: number } }) => t.insight.id === id);
    const legacyTrend = (await request(f.app).post('/api/environments/1/insights/trend/').set(admin).send(trend)).body;
    const legacyFunnel = (await request(f.app).post('/api/environments/1/insights/funnel/').set(admin).send(funnel)).body;
    expect(tile(trendInsight.id).insight.result.map((s: { data: number[] }) => s.data)).toEqual(legacyTrend.result.map((s: { data: number[] }) => s.data));
    expect(tile(trendInsight.id).insight.result[0].count).toBe(2);
    expect(tile(funnelInsight.id).insight.result.map((s: { count: number }) => s.count)).toEqual([2, 1]);
    expect(legacyFunnel.result.map((s: { count: number }) => s.count)).toEqual([2, 1]);
    expect(tile(trendInsight.id)).toMatchObject({ error: null, insight: { last_refresh: new Date(NOW).toISOString(), timezone: 'UTC' } });

    // A new event: the next read (a minute later, within the cache's time) still answers the cached count, and says so.
    await insertEvents(f.ch, [testEventRow({ event: 'signup', atMs: NOW - 60_000 })]);
    clock = NOW + 30_000;
    const cached = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).set(admin);
    expect(tile(trendInsight.id, cached.body).insight).toMatchObject({ is_cached: true, last_refresh: new Date(NOW).toISOString() });
    expect(tile(trendInsight.id, cached.body).insight.result[0].count).toBe(2);
    const refreshed = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).query({ refresh: 'true' }).set(admin);
    expect(tile(trendInsight.id, refreshed.body).insight).toMatchObject({ is_cached: false, last_refresh: new Date(NOW + 30_000).toISOString() });
    expect(tile(trendInsight.id, refreshed.body).insight.result[0].count).toBe(3);
    // The insight's own page then reads the refreshed answer.
    const insightPage = await request(f.app).get(`/api/environments/1/insights/${trendInsight.id}/`).set(admin);
    expect(insightPage.body).toMatchObject({ is_cached: true, last_refresh: new Date(NOW + 30_000).toISOString() });
  });

  it('computes a tile and an insight holding a table query (a DataTableNode around an EventsQuery, a DataVisualizationNode around a HogQLQuery) through the registry', async () => {
    const dashboard = (await request(f.app).post('/api/environments/1/dashboards/').set(admin).send({ name: 'Tables' })).body as { id: number };
    const query = {
      kind: 'DataTableNode',
      source: { kind: 'EventsQuery', select: ['event', 'count()'], after: '-7d', orderBy: ['event ASC'] },
    };
    const table = await save({ name: 'Events by name', query, dashboards: [dashboard.id] });
    const read = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).set(admin);
    const tile = read.body.tiles.find((t: { insight: { id: number } }) => t.insight.id === table.id);
    expect(tile).toMatchObject({ error: null, insight: { columns: ['event', 'count()'], types: ['String', 'UInt64'], hasMore: false, is_cached: false } });
    // The events of the first case's insert included: every signup and paid event of the last week.
    expect(tile.insight.result).toEqual([
      ['paid', 1],
      ['signup', expect.any(Number)],
    ]);
    const insight = await request(f.app).get(`/api/environments/1/insights/${table.id}/`).set(admin);
    expect(insight.body).toMatchObject({ result: tile.insight.result, columns: ['event', 'count()'], last_refresh: expect.any(String) });
    // A SQL insight (PostHog's DataVisualizationNode around a HogQLQuery) computes the same way.
    const sql = await save({
      name: 'Events by name (SQL)',
      query: { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'SELECT event, count() AS n FROM events GROUP BY event ORDER BY event' } },
      dashboards: [dashboard.id],
    });
    const withSql = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).set(admin);
    const sqlTile = withSql.body.tiles.find((t: { insight: { id: number } }) => t.insight.id === sql.id);
    expect(sqlTile).toMatchObject({ error: null, insight: { columns: ['event', 'n'], hasMore: false } });
    expect(sqlTile.insight.result).toEqual(tile.insight.result);
    // A table query no read could run is refused when saved, naming the field.
    const bad = await request(f.app)
      .post('/api/environments/1/insights/')
      .set(admin)
      .send({ name: 'Bad', query: { kind: 'DataTableNode', source: { kind: 'EventsQuery', select: 'event' } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ attr: 'select', code: 'not_a_list' });
    const badSql = await request(f.app)
      .post('/api/environments/1/insights/')
      .set(admin)
      .send({ name: 'Bad SQL', query: { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery' } } });
    expect(badSql.status).toBe(400);
    expect(badSql.body).toMatchObject({ attr: 'query' });
  });

  it('gives a tile whose query is refused its error, and still answers the others', async () => {
    const dashboard = (await request(f.app).post('/api/environments/1/dashboards/').set(admin).send({ name: 'Mixed' })).body as { id: number };
    const action = (
      await request(f.app)
        .post('/api/projects/1/actions/')
        .set(admin)
        .send({ name: 'Signed up', steps: [{ event: 'signup' }] })
    ).body as {
      id: number;
    };
    const byAction = await save({
      name: 'By action',
      filters: { insight: 'TRENDS', actions: [{ id: action.id, type: 'actions', math: 'total' }], date_from: '-7d' },
      dashboards: [dashboard.id],
    });
    const plain = await save({ name: 'Plain', filters: trend, dashboards: [dashboard.id] });
    expect((await request(f.app).patch(`/api/projects/1/actions/${action.id}/`).set(admin).send({ deleted: true })).status).toBe(200);

    const read = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).set(admin);
    expect(read.status).toBe(200);
    const tiles = new Map(read.body.tiles.map((t: { insight: { id: number } }) => [t.insight.id, t]));
    expect(tiles.get(byAction.id)).toMatchObject({ error: { code: 'action_does_not_exist' }, insight: { result: null } });
    expect(tiles.get(plain.id)).toMatchObject({ error: null, insight: { result: [expect.objectContaining({ count: expect.any(Number) })] } });
  });

  it('with refresh=force_cache answers only what the cache holds and computes nothing; a tile computed on its own fills the cache', async () => {
    const dashboard = (await request(f.app).post('/api/environments/1/dashboards/').set(admin).send({ name: 'Fast first' })).body as { id: number };
    // A range no other case asked for, so the cache holds nothing for it yet.
    const fortnight = await save({ name: 'Signups, 14 days', filters: { ...trend, date_from: '-14d' }, dashboards: [dashboard.id] });
    const tile = (body: { tiles: { insight: { id: number } }[] }) => body.tiles.find((t) => t.insight.id === fortnight.id)!;

    const cold = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).query({ refresh: 'force_cache' }).set(admin);
    expect(cold.status).toBe(200);
    expect(tile(cold.body)).toMatchObject({ error: null, insight: { result: null, is_cached: false, last_refresh: null } });

    // The web app then asks for the tile's insight by itself (PostHog's from_dashboard): computed, not recorded as a view.
    const own = await request(f.app).get(`/api/environments/1/insights/${fortnight.id}/`).query({ from_dashboard: dashboard.id }).set(admin);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ is_cached: false, result: [expect.objectContaining({ count: expect.any(Number) })] });
    const viewed = await request(f.app).get('/api/environments/1/insights/my_last_viewed/').set(admin);
    expect(viewed.body.map((i: { id: number }) => i.id)).not.toContain(fortnight.id);

    const warm = await request(f.app).get(`/api/environments/1/dashboards/${dashboard.id}/`).query({ refresh: 'force_cache' }).set(admin);
    expect(tile(warm.body).insight).toMatchObject({ is_cached: true, result: own.body.result, last_refresh: own.body.last_refresh });
  });
});
