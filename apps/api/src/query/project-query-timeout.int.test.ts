import request from 'supertest';
import { DEFAULT_ANALYTICS_QUERY_LIMITS, insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const admin = bearer(ADMIN_KEY);
/** The server's own bound in this file (ANALYTICS_QUERY_TIMEOUT_SECONDS). */
const SERVER_SECONDS = 30;
/** Events per project: the cross join below reads ROWS³ rows, a few seconds of the engine's work. */
const ROWS = 500;
const HEAVY = `SELECT count() FROM events a CROSS JOIN events b CROSS JOIN events c
               WHERE cityHash64(concat(a.distinct_id, b.distinct_id, c.distinct_id)) % 7 = 3`;

describe("a project's own query time limit (query_timeout_seconds)", () => {
  let f: FlagFixture;
  let other: number;
  beforeAll(async () => {
    f = await createFlagFixture('project-query-timeout', () => NOW, 'pg', {
      analytics: { queryLimits: { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxExecutionSeconds: SERVER_SECONDS }, cacheMaxBytes: 1024 * 1024 },
    });
    const created = await request(f.app).post('/api/projects/').set(admin).send({ name: 'Other' });
    expect(created.status).toBe(201);
    other = created.body.id as number;
    const rows = (teamId: number) => Array.from({ length: ROWS }, (_, i) => testEventRow({ teamId, event: 'e', atMs: NOW - i * 1000, distinctId: `d${i}` }));
    await insertEvents(f.ch, [...rows(1), ...rows(other)]);
  });
  afterAll(() => f.close());

  const patch = (project: number, body: Record<string, unknown>) => request(f.app).patch(`/api/projects/${project}/`).set(admin).send(body);
  const hogql = (project: number, query: string) =>
    request(f.app)
      .post(`/api/environments/${project}/query/`)
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query }, refresh: true });

  it('is read, changed and cleared on both paths; null (the server bound) by default', async () => {
    expect((await request(f.app).get('/api/projects/1/').set(admin)).body.query_timeout_seconds).toBeNull();
    const set = await request(f.app).patch('/api/environments/1/').set(admin).send({ query_timeout_seconds: 5 });
    expect(set.status).toBe(200);
    expect(set.body.query_timeout_seconds).toBe(5);
    expect((await request(f.app).get('/api/projects/1/').set(admin)).body.query_timeout_seconds).toBe(5);
    // Another setting leaves it as it is; null clears it.
    expect((await patch(1, { name: 'Renamed' })).body.query_timeout_seconds).toBe(5);
    expect((await patch(1, { query_timeout_seconds: null })).body.query_timeout_seconds).toBeNull();
    expect((await patch(1, { query_timeout_seconds: SERVER_SECONDS })).body.query_timeout_seconds).toBe(SERVER_SECONDS);
    expect((await patch(1, { query_timeout_seconds: null })).status).toBe(200);
  });

  it.each([
    [0, 'min_value', 'Ensure this value is greater than or equal to 1.'],
    [-5, 'min_value', 'Ensure this value is greater than or equal to 1.'],
    [SERVER_SECONDS + 1, 'max_value', `Ensure this value is less than or equal to ${SERVER_SECONDS}.`],
    [1e9, 'max_value', `Ensure this value is less than or equal to ${SERVER_SECONDS}.`],
    [1.5, 'invalid', 'A valid integer is required.'],
    ['ten', 'invalid', 'A valid integer is required.'],
    [true, 'invalid', 'A valid integer is required.'],
    [[5], 'invalid', 'A valid integer is required.'],
    [{ seconds: 5 }, 'invalid', 'A valid integer is required.'],
  ])('refuses %j with a 400 %s', async (value, code, detail) => {
    const res = await patch(1, { query_timeout_seconds: value });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ type: 'validation_error', code, detail, attr: 'query_timeout_seconds' });
    expect((await request(f.app).get('/api/projects/1/').set(admin)).body.query_timeout_seconds).toBeNull();
  });

  it("stops the project's queries after its own limit, and only that project's", async () => {
    expect((await patch(1, { query_timeout_seconds: 1 })).status).toBe(200);
    // The other project keeps the server's bound: it runs the query to its end, over a second.
    const started = Date.now();
    const whole = await hogql(other, HEAVY);
    expect(whole.body.detail).toBeUndefined();
    expect(whole.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThan(1_000);

    const cut = await hogql(1, HEAVY);
    expect(cut.status).toBe(400);
    expect(cut.body).toMatchObject({ type: 'validation_error', code: 'query_limit_exceeded', attr: null });
    expect(cut.body.detail).toMatch(/longer than 1 s \(max_execution_time\)/);
    // The service goes on: the project's short queries still answer.
    expect((await hogql(1, 'SELECT count() FROM events')).body.results).toEqual([[ROWS]]);
  }, 120_000);
});
