import type { Express } from 'express';
import request from 'supertest';
import { insertPersonalKey } from '@sightline/accounts';
import { hashPersonalApiKey, maskPersonalApiKey } from '@sightline/auth';
import { DEFAULT_ANALYTICS_QUERY_LIMITS, insertEvents } from '@sightline/clickhouse';
import { createServiceApp } from '@sightline/http';
import { silentLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { createTestStores, testEventRow, type TestStores } from '@sightline/testkit';
import { createApiRouter, type ApiDeps } from '../app';
import { ADMIN_KEY, bearer } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const ORIGIN = 'https://analytics.example.com';

/**
 * POST /query/ is answered before Express (preRoutedFastPath). Each app below is built from the
 * same api routing: one with only its fast paths (Express itself knows no /api route, so anything
 * answered there was answered by the fast path), one with only its Express router. Every
 * request, accepted or refused, must get the same answer from both: status, DRF body, headers.
 */
describe('POST /query/ before Express', () => {
  let stores: TestStores;
  let main: { metrics: Metrics; fastOnly: Express; expressOnly: Express };
  const build = (extra: Partial<ApiDeps> = {}) => {
    const metrics = createMetrics();
    const deps: ApiDeps = { db: stores.db, ch: stores.ch, logger: silentLogger(), metrics, now: () => NOW, access: { corsOrigins: [ORIGIN] }, ...extra };
    const { router, fastPaths } = createApiRouter(deps);
    const frame = { name: 'api', logger: deps.logger, metrics, readiness: [], isShuttingDown: () => false };
    return { metrics, fastOnly: createServiceApp({ ...frame, routers: [], fastPaths }), expressOnly: createServiceApp({ ...frame, routers: [router] }) };
  };

  beforeAll(async () => {
    stores = await createTestStores('query-fast-path', { personalApiKey: ADMIN_KEY });
    const [admin] = await stores.db.query<{ id: number }>('SELECT id FROM users ORDER BY id LIMIT 1');
    const addKey = (key: string, scopes: string[], scopedTeams: number[] | null = null) =>
      insertPersonalKey(stores.db, {
        userId: admin!.id,
        label: key,
        secureValue: hashPersonalApiKey(key),
        maskValue: maskPersonalApiKey(key),
        scopes,
        scopedTeams,
      });
    await addKey('phx_fast_no_query', ['insight:read']);
    await addKey('phx_fast_other_project', ['query:read'], [987654]);
    await insertEvents(
      stores.ch,
      ['a', 'b', 'c', 'd', 'e'].map((user, i) => testEventRow({ event: 'visit', atMs: NOW - (i + 1) * 3_600_000, distinctId: user, properties: { n: i } })),
    );
    main = build();
  });
  afterAll(() => stores.close());

  /** What a client sees of an answer, without what differs between any two requests. */
  const seen = (res: request.Response, ...ignoredHeaders: string[]) => {
    const headers = { ...res.headers };
    for (const name of ['date', 'connection', 'keep-alive', ...ignoredHeaders]) delete headers[name];
    return { status: res.status, headers, text: res.text };
  };
  // refresh: the second of the two requests would otherwise be answered from the cache the first filled.
  const query = (hogql: string) => ({ query: { kind: 'HogQLQuery', query: hogql }, refresh: true });
  type Send = (app: Express) => request.Test;
  const post =
    (body: unknown, headers: Record<string, string> = bearer(ADMIN_KEY), url = '/api/environments/1/query/'): Send =>
    (app) =>
      request(app)
        .post(url)
        .set(headers)
        .set('X-Request-Id', 'fast-path-test')
        .send(body as object);

  const cases: [string, number, Send][] = [
    ['a HogQLQuery', 200, post(query('SELECT event, count() FROM events GROUP BY event'))],
    ['an EventsQuery', 200, post({ query: { kind: 'EventsQuery', select: ['event', 'properties.n'], orderBy: ['properties.n'] }, refresh: true })],
    [
      'a TrendsQuery, under /projects/',
      200,
      post({ query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'visit' }] }, refresh: true }, undefined, '/api/projects/1/query'),
    ],
    ['format=csv in the query string', 200, post(query('SELECT event FROM events ORDER BY event'), undefined, '/api/environments/1/query/?format=csv')],
    ['format=csv in the body', 200, post({ ...query('SELECT 1'), format: 'csv' })],
    ['a browser of an allowed origin', 200, post(query('SELECT 1'), { ...bearer(ADMIN_KEY), Origin: ORIGIN })],
    ['no credentials (401)', 401, post(query('SELECT 1'), {})],
    ['an unknown key (401)', 401, post(query('SELECT 1'), bearer('phx_nobody'))],
    ['a malformed Authorization header (401)', 401, post(query('SELECT 1'), { Authorization: 'Basic abc' })],
    ['a key without query:read (403)', 403, post(query('SELECT 1'), bearer('phx_fast_no_query'))],
    ['a key restricted to another project (403)', 403, post(query('SELECT 1'), bearer('phx_fast_other_project'))],
    ['an unknown project (404)', 404, post(query('SELECT 1'), undefined, '/api/environments/424242/query/')],
    ['a project id that is no number (404)', 404, post(query('SELECT 1'), undefined, '/api/environments/abc/query/')],
    ['no query (400)', 400, post({})],
    ['a body that is no object (400)', 400, post([1, 2])],
    [
      'malformed JSON (400)',
      400,
      (app) => request(app).post('/api/environments/1/query/').set(bearer(ADMIN_KEY)).set('X-Request-Id', 'fast-path-test').type('json').send('{"query":'),
    ],
    ['an unknown table (400)', 400, post(query('SELECT 1 FROM evnts'))],
    ['an unsupported kind (400)', 400, post({ query: { kind: 'NoSuchQuery' } })],
    ['format=xml (400)', 400, post({ ...query('SELECT 1'), format: 'xml' })],
    ['csv of a kind without rows (400)', 400, post({ query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'visit' }] }, format: 'csv' })],
    ['a string past the input limits (400)', 400, post({ query: { kind: 'HogQLQuery', query: 'x'.repeat(300_000) } })],
    ['a body over the size bound (413)', 413, post({ query: { kind: 'HogQLQuery', query: 'SELECT 1', pad: 'x'.repeat(6 * 1024 * 1024) } })],
  ];

  it.each(cases)('answers %s through the fast path as Express answers it', async (_name, status, send) => {
    const { fastOnly, expressOnly } = main;
    const fast = await send(fastOnly);
    const viaExpress = await send(expressOnly);
    expect(fast.status).toBe(status);
    expect(seen(fast)).toEqual(seen(viaExpress));
    expect(fast.headers['x-request-id']).toBe('fast-path-test');
    if (status >= 400) expect(Object.keys(JSON.parse(fast.text) as object).sort()).toEqual(['attr', 'code', 'detail', 'type']);
  });

  it('answers with the security and CORS headers of the management API', async () => {
    const { fastOnly } = main;
    const res = await post(query('SELECT 1'), { ...bearer(ADMIN_KEY), Origin: ORIGIN })(fastOnly);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cross-origin-resource-policy']).toBe('same-site');
    expect(res.body).toMatchObject({ columns: ['1'], results: [[1]] });
  });

  it('leaves every other method and path to Express', async () => {
    const { fastOnly } = main;
    for (const send of [
      (app: Express) => request(app).get('/api/environments/1/query/').set(bearer(ADMIN_KEY)),
      (app: Express) => request(app).options('/api/environments/1/query/').set('Origin', ORIGIN),
      (app: Express) => request(app).post('/api/environments/1/query/extra').set(bearer(ADMIN_KEY)).send(query('SELECT 1')),
      (app: Express) => request(app).post('/api/environments/1/insights/trend/').set(bearer(ADMIN_KEY)).send({}),
    ]) {
      // Express, with no /api route in this app, answers its own 404.
      const res = await send(fastOnly);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('counts each request under the route it answered, as Express labels it', async () => {
    const { metrics, fastOnly } = build();
    await post(query('SELECT 1'))(fastOnly);
    await post(query('SELECT 1'), {})(fastOnly);
    await post({})(fastOnly);
    const counts = (await metrics.registry.getSingleMetric('http_requests_total')!.get()).values.map((v) => [v.labels.route, v.labels.status, v.value]);
    expect(counts).toEqual(
      expect.arrayContaining([
        ['/api/environments/:project_id/query', '200', 1],
        // Refused before the route's own chain (by the authentication every /api request meets): unmatched, as in Express.
        ['unmatched', '401', 1],
        ['/api/environments/:project_id/query', '400', 1],
      ]),
    );
  });

  it("refuses past the query API's rate limit (429) and past a query limit (400), as Express does", async () => {
    const limited = () =>
      build({
        access: { rateLimits: { burstPerMinute: 100, sustainedPerHour: 100, clickhouseBurstPerMinute: 1, clickhouseSustainedPerHour: 100 } },
        analytics: { queryLimits: { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxResultRows: 2 }, cacheMaxBytes: 1024 * 1024 },
      });
    // Each app its own routing, so each its own throttle: the second request of each is the refused one.
    const [one, two] = [limited(), limited()];
    const overLimit = post(query('SELECT event FROM events'));
    const [fastLimit, expressLimit] = [await overLimit(one.fastOnly), await overLimit(two.expressOnly)];
    expect(fastLimit.status).toBe(400);
    expect(fastLimit.body.code).toBe('query_limit_exceeded');
    expect(seen(fastLimit)).toEqual(seen(expressLimit));
    const [fastThrottled, expressThrottled] = [await overLimit(one.fastOnly), await overLimit(two.expressOnly)];
    expect(fastThrottled.status).toBe(429);
    expect(fastThrottled.body).toMatchObject({ type: 'throttled_error', attr: null });
    expect(Number(fastThrottled.headers['retry-after'])).toBeGreaterThan(0);
    expect(seen(fastThrottled, 'retry-after')).toEqual(seen(expressThrottled, 'retry-after'));
  });
});
