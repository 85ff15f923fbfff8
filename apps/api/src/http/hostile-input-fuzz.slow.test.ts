/**
 * Hostile-value fuzzing of every management write route and the trend endpoint, on a running
 * server over real sockets, real PostgreSQL and ClickHouse: deep nesting, NULs, lone surrogates,
 * huge integers, 1e309, megabyte strings and impossible dates at every place of a valid body.
 * Whatever arrives, the answer is never a 5xx, every error is the DRF JSON envelope, no request
 * hangs, and the health check answers throughout.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { hostileBodies, hostileJsonValue, hostileQueryValue } from '@sightline/testkit';
import { createFlagFixture, type FlagFixture, serveFixture, type ServedFixture } from '../testing/api-test-fixture';

/** Bodies per route; the routes below add up to more than 10,000 in a run. FUZZ_RUNS raises it. */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 720);
const REQUEST_TIMEOUT_MS = 20_000;
const HEALTH_EVERY = 100;

interface Answer {
  status: number;
  text: string;
}

describe('hostile input on the management API', () => {
  let fixture: FlagFixture;
  let served: ServedFixture;
  let base: string;
  let flagId: number;
  let roleId: string;
  let requests = 0;
  const statuses = new Map<number, number>();

  const send = async (method: string, path: string, body?: string): Promise<Answer> => {
    const { status, text } = await served.send(method, path, body);
    const answer = { status, text };
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    if (++requests % HEALTH_EVERY === 0) {
      const health = await fetch(`${base}/_health`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      expect(health.status).toBe(200);
    }
    return answer;
  };

  /**
   * fast-check's default report prints the whole counterexample, megabytes for a huge body: cut it.
   */
  const shortReport = <T>(details: fc.RunDetails<T>) => {
    if (!details.failed) return;
    const example = JSON.stringify(details.counterexample).slice(0, 300);
    throw new Error(`failed after ${details.numRuns} runs on ${example}: ${String(details.errorInstance).slice(0, 1_000)}`);
  };

  /** The contract every answer keeps, whatever was sent. */
  const expectHandled = (answer: Answer, what: string) => {
    if (answer.status >= 500) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 500)}`);
    if (answer.status >= 400) {
      const body = JSON.parse(answer.text) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['attr', 'code', 'detail', 'type']);
      expect(typeof body['detail']).toBe('string');
    }
  };

  const fuzzBody = async (method: string, path: () => string, valid: () => unknown) => {
    await fc.assert(
      fc.asyncProperty(
        fc.constant(null).chain(() => hostileBodies(valid())),
        async (body) => {
          const target = path();
          expectHandled(await send(method, target, body), `${method} ${target} ${body.slice(0, 300)}`);
        },
      ),
      { numRuns: RUNS, reporter: shortReport },
    );
  };

  const newFlagBody = () => ({
    key: `fuzz-${randomUUID().slice(0, 8)}`,
    name: 'Fuzzed flag',
    active: true,
    tags: ['fuzz'],
    ensure_experience_continuity: false,
    rollback_conditions: [],
    analytics_dashboards: [],
    filters: {
      groups: [
        { properties: [{ key: 'email', type: 'person', operator: 'regex', value: '@example\\.com$' }], rollout_percentage: 50 },
        { properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }], rollout_percentage: null, variant: 'test' },
      ],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 50 },
          { key: 'test', rollout_percentage: 50 },
        ],
      },
      payloads: { test: '{"colour":"blue"}' },
    },
  });

  const trendBody = () => ({
    events: [{ id: 'signup', math: 'dau', order: 0, properties: [{ key: 'plan', type: 'event', operator: 'exact', value: ['pro'] }] }],
    properties: { type: 'AND', values: [{ key: '$browser', type: 'event', operator: 'exact', value: 'Chrome' }] },
    date_from: '-7d',
    date_to: '2024-01-10',
    interval: 'day',
  });

  beforeAll(async () => {
    fixture = await createFlagFixture('hostilefuzz', () => Date.parse('2024-01-10T15:00:00Z'));
    served = await serveFixture(fixture);
    base = served.base;
    const flag = await send('POST', '/api/projects/1/feature_flags/', JSON.stringify(newFlagBody()));
    expect([flag.status, flag.text]).toEqual([201, expect.any(String)]);
    flagId = (JSON.parse(flag.text) as { id: number }).id;
    const role = await send('POST', '/api/organizations/@current/roles/', JSON.stringify({ name: 'fuzz role' }));
    expect([role.status, role.text]).toEqual([201, expect.any(String)]);
    roleId = (JSON.parse(role.text) as { id: string }).id;
  });
  afterAll(async () => {
    await served.close();
    await fixture.close();
    // Shown so a reader of the run sees the fuzzing reached past validation, not just 400s.
    process.stdout.write(`hostile fuzz: ${requests} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`);
  });

  it('flag create', () => fuzzBody('POST', () => '/api/projects/1/feature_flags/', newFlagBody));
  it('flag update (PATCH) and full update (PUT)', async () => {
    await fuzzBody(
      'PATCH',
      () => `/api/projects/1/feature_flags/${flagId}/`,
      () => ({ ...newFlagBody(), key: undefined }),
    );
    await fuzzBody('PUT', () => `/api/environments/1/feature_flags/${flagId}/`, newFlagBody);
  });
  it('flag role access, access controls and global access controls', async () => {
    await fuzzBody(
      'POST',
      () => `/api/projects/1/feature_flags/${flagId}/role_access/`,
      () => ({ role_id: roleId }),
    );
    await fuzzBody(
      'PUT',
      () => `/api/projects/1/feature_flags/${flagId}/access_controls/`,
      () => ({ access_level: 'editor', role: roleId }),
    );
    await fuzzBody(
      'PUT',
      () => `/api/projects/1/feature_flags/${flagId}/global_access_controls/`,
      () => ({ access_level: 'viewer' }),
    );
  });
  it('flag dashboards and static cohorts', async () => {
    await fuzzBody(
      'POST',
      () => `/api/projects/1/feature_flags/${flagId}/dashboard/`,
      () => ({}),
    );
    await fuzzBody(
      'POST',
      () => `/api/projects/1/feature_flags/${flagId}/create_static_cohort_for_flag/`,
      () => ({ key: 'ignored' }),
    );
  });
  it('roles and role memberships', async () => {
    await fuzzBody(
      'POST',
      () => '/api/organizations/@current/roles/',
      () => ({ name: `role ${randomUUID()}`, feature_flags_access_level: 37 }),
    );
    await fuzzBody(
      'POST',
      () => `/api/organizations/@current/roles/${roleId}/role_memberships/`,
      () => ({ user_uuid: randomUUID() }),
    );
  });
  it('trends, as a POST body and as GET query parameters', async () => {
    await fuzzBody('POST', () => '/api/environments/1/insights/trend/', trendBody);
    // The legacy GET form: structured fields as JSON text, the rest as plain strings; one field
    // replaced by a hostile value, sent as the raw JSON text a client would put there.
    const fields = Object.entries(trendBody()).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)] as const);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields.map(([key]) => key)), hostileJsonValue, async (field, hostile) => {
        const query = fields.map(([key, text]) => `${key}=${encodeURIComponent(key === field ? hostile.replace(/^"(.*)"$/s, '$1') : text)}`).join('&');
        expectHandled(await send('GET', `/api/projects/1/insights/trend/?${query}`), `GET trend ${query.slice(0, 300)}`);
      }),
      { numRuns: RUNS, reporter: shortReport },
    );
  });
  it('list query parameters', async () => {
    const lists = ['/api/projects/1/feature_flags/', '/api/projects/1/feature_flags/activity/', '/api/organizations/@current/roles/', '/api/projects/'];
    const params = ['search', 'tags', 'limit', 'offset', 'active', 'type', 'order', 'created_by_id'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...lists), fc.constantFrom(...params), hostileQueryValue, async (list, param, value) => {
        expectHandled(await send('GET', `${list}?${param}=${value}`), `GET ${list}?${param}=${value.slice(0, 300)}`);
      }),
      { numRuns: RUNS * 2, reporter: shortReport },
    );
  });
});
