/**
 * Hostile flag definitions and flag requests on a running server (issue rows 2, 5, 6, 8, 9, 12):
 * each must answer 4xx, or answer the other flags with errorsWhileComputingFlags, never 500 and
 * never stall the process. The management API's generic checks (NUL, depth, numbers) are held
 * by apps/api/src/http/hostile-input.int.test.ts; these are the flag-specific ones.
 */
import { insertCohort, insertPerson } from '@sightline/testkit';
import { ADMIN_KEY, createFlagFixture, serveFixture, type FlagFixture, type ServedFixture } from '../testing/api-test-fixture';

const everyone = { groups: [{ properties: [], rollout_percentage: 100 }] };
const personFilter = (key: string, operator: string, value: unknown) => ({
  groups: [{ properties: [{ key, type: 'person', operator, value }], rollout_percentage: 100 }],
});

describe('hostile flag definitions and flag requests', () => {
  let fixture: FlagFixture;
  let served: ServedFixture;
  let base: string;
  let token: string;

  const api = (method: string, path: string, body?: unknown) => served.send(method, path, body);
  const createFlag = (body: Record<string, unknown>) => api('POST', '/api/projects/1/feature_flags/', body);
  const flags = async (body: unknown, path = '/flags/?v=2') => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const definitions = async (path: string) => {
    const response = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${ADMIN_KEY}` }, signal: AbortSignal.timeout(30_000) });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  let healthyId: number;
  /** Writes a row as data from before validation existed; an edit through the API then drops the cached definitions. */
  const storeUnvalidated = async (key: string, filters: unknown) => {
    await fixture.db.query('INSERT INTO feature_flags (team_id, key, filters) VALUES (1, $1, $2)', [key, JSON.stringify(filters)]);
    expect((await api('PATCH', `/api/projects/1/feature_flags/${healthyId}/`, { name: `after ${key}` })).status).toBe(200);
  };
  const flagId = async (key: string) =>
    (await fixture.db.query<{ id: number }>('SELECT id FROM feature_flags WHERE team_id = 1 AND key = $1 AND NOT deleted', [key]))[0]!.id;

  beforeAll(async () => {
    fixture = await createFlagFixture('flag_hostile', () => Date.parse('2024-01-10T15:00:00Z'));
    served = await serveFixture(fixture);
    base = served.base;
    token = (await fixture.db.query<{ api_token: string }>('SELECT api_token FROM projects WHERE id = 1'))[0]!.api_token;
    // A static cohort makes the loader look through every flag's conditions for cohort filters.
    const person = await insertPerson(fixture.db, 1, ['cohort-member'], {});
    await insertCohort(fixture.db, 1, { isStatic: true, personIds: [person] });
    const healthy = await createFlag({ key: 'stored-healthy', filters: everyone });
    expect(healthy.status).toBe(201);
    healthyId = healthy.json['id'] as number;
  });
  afterAll(async () => {
    await served.close();
    await fixture.close();
  });

  describe('row 2: a flag the engine cannot read', () => {
    it.each([
      ['variants {}', { ...everyone, multivariate: { variants: {} } }],
      ['groups {}', { groups: { a: 1 } }],
      ['properties "x"', { groups: [{ properties: 'x', rollout_percentage: 100 }] }],
      ['a null condition', { groups: [null] }],
      ['variants "abc"', { ...everyone, multivariate: { variants: 'abc' } }],
    ])('stored with %s fails alone in decide, flags and local evaluation', async (label, filters) => {
      const key = `broken-${label.replace(/\W+/g, '-')}`;
      await storeUnvalidated(key, filters);
      for (const path of ['/flags/?v=2', '/decide/?v=3', '/decide/?v=4']) {
        const answer = await flags({ token, distinct_id: 'cohort-member' }, path);
        expect([path, answer.status, answer.json['errorsWhileComputingFlags']]).toEqual([path, 200, true]);
        const served = (answer.json['flags'] ?? answer.json['featureFlags']) as Record<string, unknown>;
        expect(served).toHaveProperty('stored-healthy');
        expect(served).not.toHaveProperty(key);
      }
      for (const path of ['/flags/definitions?send_cohorts', `/api/feature_flag/local_evaluation?token=${token}`]) {
        const local = await definitions(path);
        expect([path, local.status]).toEqual([path, 200]);
        const keys = (local.json['flags'] as Array<{ key: string }>).map((f) => f.key);
        expect(keys).toEqual(expect.arrayContaining(['stored-healthy', key]));
      }
      await fixture.db.query('UPDATE feature_flags SET deleted = true WHERE key = $1', [key]);
    });

    it.each([
      ['variants {}', { variants: {} }, 'invalid'],
      ['variants true', { variants: true }, 'invalid'],
      ['variants 0', { variants: 0 }, 'invalid'],
      ['a variant key of 401 characters', { variants: [{ key: 'v'.repeat(401), rollout_percentage: 100 }] }, 'max_length'],
      ['percentages summing to 90', { variants: [{ key: 'a', rollout_percentage: 90 }] }, 'invalid_input'],
    ])('is refused at create: %s', async (_label, multivariate, code) => {
      const answer = await createFlag({ key: 'refused-variants', filters: { ...everyone, multivariate } });
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ type: 'validation_error', attr: 'filters', code });
    });
  });

  describe('row 5: regular expressions', () => {
    it('decide with 30 a’s and ! against ^(a+)+$ answers false, and not_regex true', async () => {
      expect((await createFlag({ key: 'nested-plus', filters: personFilter('name', 'regex', '^(a+)+$') })).status).toBe(201);
      expect((await createFlag({ key: 'nested-plus-not', filters: personFilter('name', 'not_regex', '^(a+)+$') })).status).toBe(201);
      const answer = await flags({ token, distinct_id: 'x', person_properties: { name: `${'a'.repeat(30)}!` } });
      expect(answer.status).toBe(200);
      expect(answer.json['flags']).toMatchObject({ 'nested-plus': { enabled: false }, 'nested-plus-not': { enabled: true } });
      expect(answer.json['errorsWhileComputingFlags']).toBe(false);
    });

    it('a match past the work budget fails that flag alone; the others answer', async () => {
      expect((await createFlag({ key: 'wide-pattern', filters: personFilter('bio', 'regex', '\\w{500}\\d') })).status).toBe(201);
      const answer = await flags({ token, distinct_id: 'x', person_properties: { bio: 'a'.repeat(1_000_000) } });
      expect(answer.status).toBe(200);
      expect(answer.json['errorsWhileComputingFlags']).toBe(true);
      expect(answer.json['flags']).not.toHaveProperty('wide-pattern');
      expect(answer.json['flags']).toMatchObject({ 'stored-healthy': { enabled: true } });
      const short = await flags({ token, distinct_id: 'x', person_properties: { bio: `${'a'.repeat(500)}1` } });
      expect(short.json['flags']).toMatchObject({ 'wide-pattern': { enabled: true } });
      expect((await api('PATCH', `/api/projects/1/feature_flags/${await flagId('wide-pattern')}/`, { deleted: true })).status).toBe(200);
    });

    it('a pattern RE2 cannot compile is a 400 naming filters', async () => {
      const answer = await createFlag({ key: 'backreference', filters: personFilter('name', 'regex', '(a)\\1') });
      expect(answer.json).toMatchObject({ attr: 'filters', code: 'invalid_value' });
    });
  });

  describe('row 6: NUL outside the /api guard', () => {
    it('a NUL in a decide or flags token is a 401, in ids and properties it is answered', async () => {
      for (const path of ['/flags/?v=2', '/decide/?v=3']) {
        const badToken = await flags({ token: `${token}\u0000`, distinct_id: 'x' }, path);
        expect([path, badToken.status, badToken.json['type']]).toEqual([path, 401, 'authentication_error']);
      }
      const answer = await flags({
        token,
        distinct_id: 'a\u0000b',
        $device_id: '\u0000',
        person_properties: { 'k\u0000': 'v\u0000', name: '\u0000' },
        flag_keys_to_evaluate: ['stored-healthy', '\u0000'],
      });
      expect(answer.status).toBe(200);
      expect(answer.json['flags']).toMatchObject({ 'stored-healthy': { enabled: true } });
    });

    it('a NUL in the local-evaluation token is a 4xx on both routes', async () => {
      for (const path of ['/flags/definitions?token=%00', '/api/feature_flag/local_evaluation?token=%00', '/flags/definitions?token=phc_%00x']) {
        const answer = await definitions(path);
        expect([path, answer.status >= 400 && answer.status < 500]).toEqual([path, true]);
        expect(typeof answer.json['detail']).toBe('string');
      }
    });
  });

  describe('row 8: integers past their column', () => {
    it('version, flag ids in paths and role ids answer 400 or 404, never 500', async () => {
      const id = healthyId;
      const version = await api('PATCH', `/api/projects/1/feature_flags/${id}/`, { version: 2147483648 });
      expect(version.json).toMatchObject({ attr: 'version', code: 'max_value' });
      for (const path of ['/api/projects/1/feature_flags/2147483648/', '/api/projects/1/feature_flags/9223372036854775808/activity/']) {
        expect([path, (await api('GET', path)).status]).toEqual([path, 404]);
      }
      const roleAccess = await api('POST', `/api/projects/1/feature_flags/${id}/role_access/`, { role_id: 2147483648 });
      expect(roleAccess.json).toMatchObject({ attr: 'role_id', code: 'does_not_exist' });
      const groupIndex = await createFlag({ key: 'group-index', filters: { ...everyone, aggregation_group_type_index: 2147483648 } });
      expect(groupIndex.json).toMatchObject({ attr: 'filters' });
      for (const query of ['limit=1e20&offset=9223372036854775808', 'limit=2147483648']) {
        const roles = await api('GET', `/api/organizations/@current/roles/?${query}`);
        expect([query, roles.status]).toEqual([query, 200]);
      }
    });
  });

  describe('row 9: string lengths', () => {
    it('name, property keys and role names have a bound; messages quote at most 200 characters of what was sent', async () => {
      const name = await createFlag({ key: 'long-name', name: 'n'.repeat(65_536), filters: everyone });
      expect(name.json).toEqual({ type: 'validation_error', code: 'max_length', detail: 'Ensure this field has no more than 65535 characters.', attr: 'name' });
      expect((await createFlag({ key: 'long-name', name: 'n'.repeat(65_535), filters: everyone })).status).toBe(201);
      const propertyKey = await createFlag({ key: 'long-property', filters: personFilter('p'.repeat(401), 'exact', 'x') });
      expect(propertyKey.json).toMatchObject({ attr: 'filters', code: 'max_length' });
      const operator = await createFlag({ key: 'long-operator', filters: personFilter('p', 'o'.repeat(200_000), 'x') });
      expect(operator.json).toMatchObject({ attr: 'filters', code: 'invalid_operator' });
      expect((operator.json['detail'] as string).length).toBeLessThan(600);
      const role = await api('POST', '/api/organizations/@current/roles/', { name: 'r'.repeat(5_000_000) });
      expect(role.status).toBe(400);
      expect(role.json).toMatchObject({ attr: 'name', code: 'max_length' });
      const level = await api('POST', '/api/organizations/@current/roles/', { name: 'level', feature_flags_access_level: 'l'.repeat(100_000) });
      expect(level.json).toMatchObject({ attr: 'feature_flags_access_level', code: 'invalid_choice' });
      expect((level.json['detail'] as string).length).toBeLessThan(300);
    });
  });

  describe('row 12: numbers as strings', () => {
    it('a safe integer key is kept as its text, as DRF does', async () => {
      const answer = await createFlag({ key: 9007199254740991, filters: everyone });
      expect(answer.status).toBe(201);
      expect(answer.json['key']).toBe('9007199254740991');
    });
  });
});
