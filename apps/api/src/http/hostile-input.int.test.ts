/**
 * Regression tests for the hostile requests that once took the service down or answered 500,
 * each on a running server over a real socket, followed by a health check and an ordinary
 * request that must still be served.
 */
import { ADMIN_KEY, createFlagFixture, serveFixture, type FlagFixture, type ServedFixture } from '../testing/api-test-fixture';

describe('hostile requests to the management API', () => {
  let fixture: FlagFixture;
  let served: ServedFixture;
  let base: string;

  const send = (method: string, path: string, body?: string) => served.send(method, path, body);
  const trend = (body: string) => send('POST', '/api/environments/1/insights/trend/', body);
  const stillServing = async () => {
    expect((await fetch(`${base}/_health`)).status).toBe(200);
    expect((await trend('{"events":[{"id":"signup"}]}')).status).toBe(200);
  };

  beforeAll(async () => {
    fixture = await createFlagFixture('hostile', () => Date.parse('2024-01-10T15:00:00Z'));
    served = await serveFixture(fixture);
    base = served.base;
  });
  afterAll(async () => {
    await served.close();
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

  it('series are capped, which bounds the answer (row 4)', async () => {
    const many = (n: number) => JSON.stringify({ events: Array.from({ length: n }, () => ({ id: 'signup', math: 'total' })) });
    const refused = await trend(many(1000));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'max_length', attr: 'events', detail: 'At most 50 series are allowed in one query; got 1000.' });
    const fifty = await trend(many(50));
    expect(fifty.status).toBe(200);
    expect((fifty.json['result'] as unknown[]).length).toBe(50);
    // Each series carries the query's series list (the legacy answer's shape), so the answer
    // grows with the square of the series count; the cap keeps the largest one small.
    expect(fifty.text.length).toBeLessThan(1_000_000);
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
    expect(role.json).toEqual({
      type: 'validation_error',
      code: 'surrogate_characters_not_allowed',
      detail: 'Surrogate characters are not allowed: U+D800.',
      attr: 'name',
    });
  });

  it('a GET trend carries the same checks inside its JSON parameters', async () => {
    const deep = encodeURIComponent(`[{"id":"signup","x":${'['.repeat(100)}${']'.repeat(100)}}]`);
    const answer = await send('GET', `/api/projects/1/insights/trend/?events=${deep}`);
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ code: 'max_depth', attr: expect.stringMatching(/^events__0__x/) });
  });

  describe('flags', () => {
    let token: string;
    const decide = async (body: Record<string, unknown>, path = '/flags/?v=2') => {
      const response = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify({ token, ...body }), signal: AbortSignal.timeout(30_000) });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const createFlag = (body: Record<string, unknown>) => send('POST', '/api/projects/1/feature_flags/', JSON.stringify(body));
    const everyone = { groups: [{ properties: [], rollout_percentage: 100 }] };

    beforeAll(async () => {
      token = (await fixture.db.query<{ api_token: string }>('SELECT api_token FROM projects WHERE id = 1'))[0]!.api_token;
    });

    it.each([{}, true, 0, [{ rollout_percentage: 100 }], [{ key: 'a', rollout_percentage: 'x' }]])(
      'variants %p are refused at create (row 2)',
      async (variants) => {
        const answer = await createFlag({ key: `variants-${JSON.stringify(variants).length}`, filters: { ...everyone, multivariate: { variants } } });
        expect(answer.status).toBe(400);
        expect(answer.json).toMatchObject({ type: 'validation_error', attr: 'filters' });
      },
    );

    it('a malformed flag stored before validation fails alone; the project keeps its other flags (row 2)', async () => {
      expect((await createFlag({ key: 'healthy', filters: everyone })).status).toBe(201);
      await fixture.db.query(
        `INSERT INTO feature_flags (team_id, key, filters) VALUES (1, 'legacy-broken', '{"groups":[{"properties":[],"rollout_percentage":100}],"multivariate":{"variants":{}}}')`,
      );
      for (const path of ['/flags/?v=2', '/decide/?v=3']) {
        const answer = await decide({ distinct_id: 'someone' }, path);
        expect(answer.status).toBe(200);
        expect(answer.json['errorsWhileComputingFlags']).toBe(true);
        const flags = JSON.stringify(answer.json);
        expect(flags).toContain('healthy');
        expect(flags).not.toContain('legacy-broken');
      }
      await fixture.db.query("UPDATE feature_flags SET deleted = true WHERE key = 'legacy-broken'");
    });

    it('a backtracking pattern is matched in linear time, and a pattern RE2 cannot compile is refused (row 5)', async () => {
      const person = (operator: string, value: string) => ({
        groups: [{ properties: [{ key: 'name', type: 'person', operator, value }], rollout_percentage: 100 }],
      });
      expect((await createFlag({ key: 'nested-quantifier', filters: person('regex', '^(a+)+$') })).status).toBe(201);
      const answer = await decide({ distinct_id: 'x', person_properties: { name: `${'a'.repeat(30)}!` } });
      expect(answer.status).toBe(200);
      expect(answer.json['flags']).toMatchObject({ 'nested-quantifier': { enabled: false } });
      const lookahead = await createFlag({ key: 'lookahead', filters: person('regex', 'a(?=b)') });
      expect(lookahead.status).toBe(400);
      expect(lookahead.json).toMatchObject({ attr: 'filters', code: 'invalid_value' });
      const unknownOperator = await createFlag({ key: 'unknown-op', filters: person('matches_vibes', 'x') });
      expect(unknownOperator.json).toMatchObject({ attr: 'filters', code: 'invalid_operator' });
    });

    it('a NUL in the local-evaluation token or in decide ids is never a 500 (row 6)', async () => {
      const definitions = await fetch(`${base}/flags/definitions?token=%00`, { headers: { Authorization: `Bearer ${ADMIN_KEY}` } });
      expect(definitions.status).toBe(401);
      expect(await definitions.json()).toMatchObject({ type: 'authentication_error' });
      const answer = await decide({ distinct_id: 'a\u0000b', $anon_distinct_id: '\u0000', groups: { company: 'c\u0000' } });
      expect(answer.status).toBe(200);
      expect(answer.json['errorsWhileComputingFlags']).toBe(false);
    });

    it('ids past their column are refused or clamped (row 8)', async () => {
      const dashboards = await createFlag({ key: 'dashboards', filters: everyone, analytics_dashboards: [2147483648] });
      expect(dashboards.json).toEqual({
        type: 'validation_error',
        code: 'does_not_exist',
        detail: 'Invalid pk "2147483648" - object does not exist.',
        attr: 'analytics_dashboards',
      });
      const cohort = await createFlag({ key: 'cohort', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 2 ** 31 }] }] } });
      expect(cohort.json).toMatchObject({ code: 'cohort_does_not_exist', detail: 'Cohort with id 2147483648 does not exist' });
      for (const query of ['limit=9223372036854775808', 'offset=100000000000000000000', 'limit=1e20', 'created_by_id=9223372036854775808']) {
        const list = await send('GET', `/api/projects/1/feature_flags/?${query}`);
        expect([query, list.status]).toEqual([query, 200]);
      }
      const activity = await send('GET', '/api/projects/1/feature_flags/activity/?limit=9223372036854775808');
      expect(activity.json).toMatchObject({ code: 'max_value', attr: 'limit' });
      const roles = await send('GET', '/api/organizations/@current/roles/?offset=9223372036854775808');
      expect(roles.status).toBe(200);
    });

    it('over-long keys, tags and role names are a 400 naming the limit (row 9)', async () => {
      const key = await createFlag({ key: 'k'.repeat(5_000_000), filters: everyone });
      expect(key.status).toBe(400);
      expect(key.json).toMatchObject({ attr: 'key', code: 'max_length' });
      const limitKey = await createFlag({ key: 'k'.repeat(401), filters: everyone });
      expect(limitKey.json).toEqual({
        type: 'validation_error',
        code: 'max_length',
        detail: 'Ensure this field has no more than 400 characters.',
        attr: 'key',
      });
      expect((await createFlag({ key: 'k'.repeat(400), filters: everyone })).status).toBe(201);
      const tag = await createFlag({ key: 'long-tag', filters: everyone, tags: ['t'.repeat(256)] });
      expect(tag.json).toMatchObject({ attr: 'tags__0', code: 'max_length' });
      const role = await send('POST', '/api/organizations/@current/roles/', JSON.stringify({ name: 'r'.repeat(201) }));
      expect(role.json).toMatchObject({ attr: 'name', code: 'max_length', detail: 'Ensure this field has no more than 200 characters.' });
      await stillServing();
    });
  });
});
