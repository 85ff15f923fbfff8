/**
 * Regression tests for the hostile requests that once took the service down or answered 500,
 * each on a running server over a real socket, followed by a health check and an ordinary
 * request that must still be served.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ADMIN_KEY, createFlagFixture, type FlagFixture } from './feature-flags/flag-test-fixture';

describe('hostile requests to the management API', () => {
  let fixture: FlagFixture;
  let server: Server;
  let base: string;

  const send = async (method: string, path: string, body?: string) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
  };
  const trend = (body: string) => send('POST', '/api/environments/1/insights/trend/', body);
  const stillServing = async () => {
    expect((await fetch(`${base}/_health`)).status).toBe(200);
    expect((await trend('{"events":[{"id":"signup"}]}')).status).toBe(200);
  };

  beforeAll(async () => {
    fixture = await createFlagFixture('hostile', () => Date.parse('2024-01-10T15:00:00Z'));
    server = fixture.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await fixture.close();
  });

  it.each(['-150000000d', '-99999999999999999999h'])('a trend from %s is a 400 before anything is allocated (row 1)', async (dateFrom) => {
    const answer = await trend(JSON.stringify({ events: [{ id: 'signup' }], date_from: dateFrom }));
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      type: 'validation_error',
      code: 'invalid_date',
      detail: `Date "${dateFrom}" is outside the supported range (1900-01-01 to 2299-12-31).`,
      attr: 'date_from',
    });
    await stillServing();
  });

  it('a range with too many buckets says so (row 1)', async () => {
    const answer = await trend(JSON.stringify({ events: [{ id: 'signup' }], date_from: '1990-01-01', date_to: '2024-01-01' }));
    expect(answer.status).toBe(400);
    expect(answer.json['detail']).toBe('The date range holds 12419 day buckets; at most 3660 are allowed. Narrow the range or use a longer interval.');
  });

  it('series are capped, and each series no longer repeats the list of series (row 4)', async () => {
    const many = (n: number) => JSON.stringify({ events: Array.from({ length: n }, () => ({ id: 'signup', math: 'total' })) });
    const refused = await trend(many(1000));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'max_length', attr: 'events', detail: 'At most 50 series are allowed in one query; got 1000.' });
    const one = await trend(many(1));
    const fifty = await trend(many(50));
    expect(fifty.status).toBe(200);
    expect((fifty.json['result'] as unknown[]).length).toBe(50);
    // Linear in the series count: fifty series are about fifty times one series, not 2,500 times.
    expect(fifty.text.length).toBeLessThan(one.text.length * 55);
    await stillServing();
  });

  it.each([
    ['-999999y', 'date_from', /outside the supported range/],
    ['2024-02-30', 'date_from', /that day does not exist/],
  ])('date_from %s is a 400 (rows 10, 12)', async (dateFrom, attr, detail) => {
    const answer = await trend(JSON.stringify({ events: [{ id: 'signup' }], date_from: dateFrom }));
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ type: 'validation_error', attr, detail: expect.stringMatching(detail) });
  });

  it('NUL characters in bodies and query strings are a 400 naming the field (row 6)', async () => {
    const created = await send('POST', '/api/projects/1/feature_flags/', JSON.stringify({ key: 'nul', name: 'a\u0000b', filters: { groups: [] } }));
    expect(created.status).toBe(400);
    expect(created.json).toEqual({ type: 'validation_error', code: 'null_characters_not_allowed', detail: 'Null characters are not allowed.', attr: 'name' });
    for (const path of ['/api/projects/1/feature_flags/?search=%00', '/api/projects/1/feature_flags/?tags=a%00']) {
      const listed = await send('GET', path);
      expect(listed.status).toBe(400);
      expect(listed.json['code']).toBe('null_characters_not_allowed');
    }
    const role = await send('POST', '/api/organizations/@current/roles/', JSON.stringify({ name: 'x\u0000' }));
    expect(role.json).toMatchObject({ code: 'null_characters_not_allowed', attr: 'name' });
    await stillServing();
  });

  it('a value nested 10,000 levels deep in one field is a 400 (row 7)', async () => {
    const deep = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    const flag = await send('POST', '/api/projects/1/feature_flags/', `{"key":"deep","filters":{"groups":[]},"rollback_conditions":${deep}}`);
    expect(flag.status).toBe(400);
    expect(flag.json).toMatchObject({ code: 'max_depth', attr: expect.stringMatching(/^rollback_conditions__0__0/) });
    const series = await trend(`{"events":[{"id":"signup","custom":${deep}}]}`);
    expect(series.json).toMatchObject({ code: 'max_depth', attr: expect.stringMatching(/^events__0__custom__0/) });
    await stillServing();
  });

  it('integers beyond 2^53 and 1e309 are a 400, not a silently different value (rows 8, 12)', async () => {
    const key = await send('POST', '/api/projects/1/feature_flags/', '{"key":9223372036854775808,"filters":{"groups":[]}}');
    expect(key.status).toBe(400);
    expect(key.json).toMatchObject({ code: 'max_value', attr: 'key' });
    const name = await send('POST', '/api/projects/1/feature_flags/', '{"key":"inf","name":1e309,"filters":{"groups":[]}}');
    expect(name.json).toMatchObject({ code: 'invalid', attr: 'name', detail: 'Number out of range: not a finite number.' });
    const dashboards = await send('POST', '/api/projects/1/feature_flags/', '{"key":"dash","filters":{"groups":[]},"analytics_dashboards":[1e20]}');
    expect(dashboards.json).toMatchObject({ code: 'max_value', attr: 'analytics_dashboards__0' });
  });

  it('a lone surrogate is a 400, not stored as U+FFFD (row 12)', async () => {
    const role = await send('POST', '/api/organizations/@current/roles/', '{"name":"\\ud800"}');
    expect(role.status).toBe(400);
    expect(role.json).toEqual({ type: 'validation_error', code: 'surrogate_characters_not_allowed', detail: 'Surrogate characters are not allowed: U+D800.', attr: 'name' });
  });

  it('a GET trend carries the same checks inside its JSON parameters', async () => {
    const deep = encodeURIComponent(`[{"id":"signup","x":${'['.repeat(100)}${']'.repeat(100)}}]`);
    const answer = await send('GET', `/api/projects/1/insights/trend/?events=${deep}`);
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ code: 'max_depth', attr: expect.stringMatching(/^events__0__x/) });
  });
});
