/**
 * Hostile-value fuzzing of every management write route (generated from the route registry, so
 * a new route is fuzzed without new test code) and the trend endpoint's query form, on a running
 * server over real sockets, real PostgreSQL and ClickHouse: deep nesting, NULs, lone surrogates,
 * huge integers, 1e309, megabyte strings and impossible dates at every place of a valid body.
 * Whatever arrives, the answer is never a 5xx, every error is the DRF JSON envelope, no request
 * hangs, and the health check answers throughout.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { createTestPerson, hostileBodies, hostileJsonValue, hostileQueryValue } from '@sightline/testkit';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache } from '@sightline/flag-store';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createApiRouteTable } from '../app';
import { createFlagFixture, type FlagFixture, serveFixture, type ServedFixture } from '../testing/api-test-fixture';
import { fillPath, type RouteIds } from '../testing/route-paths';
import type { RouteDefinition } from './route-registry';

/**
 * Bodies across all write routes of the registry (at least this many); FUZZ_BODIES raises it.
 * Each run draws new ones (no fixed seed), so npm test's budget takes a share per run.
 */
const TOTAL_BODIES = Number(process.env['FUZZ_BODIES'] ?? 6_000);
/** Runs of each query-parameter property below. */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 300);
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
  let routes: RouteDefinition[];
  let ids: RouteIds;
  let roleId: string;
  let requests = 0;
  let bodies = 0;
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
      // PostHog's enrich_usage_dashboard refuses a flag it cannot enrich with its own {success: false, error} body.
      if (/\/enrich_usage_dashboard\/?$/.test(what.split(' ')[1] ?? '') && answer.status === 400 && 'success' in body) {
        expect([Object.keys(body).sort(), body['success'], typeof body['error']]).toEqual([['error', 'success'], false, 'string']);
        return;
      }
      expect(Object.keys(body).sort()).toEqual(['attr', 'code', 'detail', 'type']);
      expect(typeof body['detail']).toBe('string');
    }
  };

  const fuzzBody = async (method: string, path: () => string, valid: () => unknown, runs: number) => {
    await fc.assert(
      fc.asyncProperty(
        fc.constant(null).chain(() => hostileBodies(valid())),
        async (body) => {
          const target = path();
          bodies++;
          expectHandled(await send(method, target, body), `${method} ${target} ${body.slice(0, 300)}`);
        },
      ),
      { numRuns: runs, reporter: shortReport },
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
    const definitions = createFlagDefinitionsCache({ db: fixture.db, channel: createInMemoryInvalidation() });
    routes = createApiRouteTable({ db: fixture.db, ch: fixture.ch, logger: silentLogger(), metrics: createMetrics() }, definitions).routes;
    const create = async (path: string, body: unknown) => {
      const answer = await send('POST', path, JSON.stringify(body));
      expect([answer.status, answer.text]).toEqual([201, expect.any(String)]);
      return String((JSON.parse(answer.text) as { id: number | string }).id);
    };
    const flagId = await create('/api/projects/1/feature_flags/', newFlagBody());
    roleId = await create('/api/organizations/@current/roles/', { name: 'fuzz role' });
    const user = await fixture.addUser('fuzz-member@example.com');
    ids = {
      project_id: '1',
      organization_id: '@current',
      flag_id: flagId,
      role_id: roleId,
      action_id: await create('/api/projects/1/actions/', { name: 'fuzz action', steps: [{ event: 'signup' }] }),
      dashboard_id: await create('/api/projects/1/dashboards/', { name: 'fuzz dashboard' }),
      cohort_id: await create('/api/projects/1/cohorts/', { name: 'fuzz cohort', is_static: true }),
      insight_id: await create('/api/projects/1/insights/', { name: 'fuzz insight', filters: { insight: 'TRENDS', events: [{ id: 'signup' }] } }),
      person_id: (await createTestPerson(fixture, { distinctIds: ['fuzz-person'], properties: { email: 'fuzz@example.com' } })).uuid,
      membership_id: await create(`/api/organizations/@current/roles/${roleId}/role_memberships/`, { user_uuid: user.uuid }),
      role_access_id: await create(`/api/projects/1/feature_flags/${flagId}/role_access/`, { role_id: roleId }),
      // A key other than the admin's, so rolling it leaves the fuzzing's own key working.
      key_id: await create('/api/personal_api_keys/', { label: 'fuzzed', scopes: ['insight:read'] }),
    };
  });
  afterAll(async () => {
    await served.close();
    await fixture.close();
    // Shown so a reader of the run sees the fuzzing reached past validation, not just 400s.
    process.stdout.write(
      `hostile fuzz: ${bodies} bodies over the registry's write routes, ${requests} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`,
    );
  });

  /** Valid bodies richer than a route's declared example, where uniqueness or real ids matter. */
  const validBodyOf = (route: RouteDefinition): (() => unknown) | undefined => {
    if (route.path.endsWith('/feature_flags') || (route.method === 'put' && route.path.endsWith('/feature_flags/:id'))) return newFlagBody;
    if (route.path.endsWith('/feature_flags/:id') && route.method === 'patch') return () => ({ ...newFlagBody(), key: undefined });
    if (route.path.endsWith('/role_access')) return () => ({ role_id: roleId });
    if (route.path.endsWith('/access_controls')) return () => ({ access_level: 'editor', role: roleId });
    if (route.path.endsWith('/roles')) return () => ({ name: `role ${randomUUID()}`, feature_flags_access_level: 37 });
    if (route.path.endsWith('/role_memberships')) return () => ({ user_uuid: randomUUID() });
    if (route.path.endsWith('/insights/trend')) return trendBody;
    // Refused whatever the body (persons come from ingestion), so it has no example in the API document; fuzzed all the same.
    if (route.path.endsWith('/persons') && route.method === 'post') return () => ({ properties: { email: 'a@example.com' } });
    return route.example;
  };

  it('every write route of the registry, at least 10,000 bodies in all', async () => {
    const writes = routes.filter((r) => r.method === 'post' || r.method === 'put' || r.method === 'patch');
    // Every write route declares a valid body, so none is left out of the fuzzing.
    expect(writes.filter((r) => !validBodyOf(r)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const perRoute = Math.ceil(TOTAL_BODIES / writes.length);
    for (const route of writes) await fuzzBody(route.method.toUpperCase(), () => fillPath(route, ids), validBodyOf(route)!, perRoute);
    expect(bodies).toBeGreaterThanOrEqual(TOTAL_BODIES);
  }, 1_800_000);
  it('trends as GET query parameters', async () => {
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
