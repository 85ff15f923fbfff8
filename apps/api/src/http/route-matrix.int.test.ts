/**
 * Generated from the route registry, so a new route is covered without new test code:
 * - route × scope: a key holding exactly the route's scopes gets through (not 401/403); a key with
 *   any other single scope gets PostHog's 403 naming the first missing scope;
 * - route × project: a key restricted to project A gets 403 on every route of project B, and no
 *   answer for project A ever carries B's objects when addressed by B's ids; unknown project ids are
 *   404 whatever their shape.
 */
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { ALL_SCOPES, hashPersonalApiKey, hasScope, type Scope } from '@sightline/auth';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache } from '@sightline/flag-store';
import { createTestGroup, createTestPerson, insertGroupType } from '@sightline/testkit';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createApiRouteTable } from '../app';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';
import { fillPath, type RouteIds } from '../testing/route-paths';
import { isProjectRoute, requiredScopes, type RouteDefinition } from './route-registry';

const MARKER_B = `secret-b-${randomUUID().slice(0, 8)}`;

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

describe('route × scope and route × project matrices', () => {
  let fixture: FlagFixture;
  let routes: RouteDefinition[];
  let idsA: RouteIds;
  let idsB: RouteIds;
  const keyFor = new Map<string, string>();
  /** Statuses the exact-scope keys got, shown so a reader sees the routes ran past their checks. */
  const allowedStatuses: Record<number, number> = {};
  const counts = { scopeAllowed: 0, scopeDenied: 0, projectDenied: 0, crossProjectIds: 0, unknownProject: 0 };

  const send = (method: string, path: string, key: string, body?: unknown) => {
    const req = request(fixture.app)[method as 'get'](path).set(bearer(key));
    return method === 'get' || method === 'delete' ? req : req.send((body ?? {}) as object);
  };
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await send(method, path, ADMIN_KEY, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body as Record<string, unknown>;
  };

  /** One of each object in a project, named with `marker`. */
  async function seed(projectId: number, marker: string): Promise<RouteIds> {
    const p = `/api/projects/${projectId}`;
    const flag = await admin('post', `${p}/feature_flags/`, {
      key: `${marker}-flag`,
      name: marker,
      filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
    });
    const action = await admin('post', `${p}/actions/`, { name: `${marker} action`, steps: [{ event: marker }] });
    const dashboard = await admin('post', `${p}/dashboards/`, { name: `${marker} dashboard` });
    const cohort = await admin('post', `${p}/cohorts/`, { name: `${marker} cohort`, is_static: true });
    const insight = await admin('post', `${p}/insights/`, { name: `${marker} insight`, filters: { insight: 'TRENDS', events: [{ id: marker }] } });
    const person = await createTestPerson(fixture, { teamId: projectId, distinctIds: [`${marker}-person`], properties: { email: `${marker}@example.com` } });
    await insertGroupType(fixture.db, projectId, `${marker}-type`, 0);
    await createTestGroup(fixture, { teamId: projectId, groupTypeIndex: 0, groupKey: 'acme', properties: { name: marker } });
    return {
      project_id: String(projectId),
      organization_id: '@current',
      flag_id: String(flag['id']),
      action_id: String(action['id']),
      dashboard_id: String(dashboard['id']),
      cohort_id: String(cohort['id']),
      insight_id: String(insight['id']),
      person_id: person.uuid,
    };
  }

  beforeAll(async () => {
    fixture = await createFlagFixture('routematrix', () => Date.parse('2024-01-10T15:00:00Z'));
    const definitions = createFlagDefinitionsCache({ db: fixture.db, channel: createInMemoryInvalidation() });
    // The same table the app mounts; only its declarations are read here.
    routes = createApiRouteTable({ db: fixture.db, ch: fixture.ch, logger: silentLogger(), metrics: createMetrics() }, definitions).routes;
    const projectB = await admin('post', '/api/projects/', { name: MARKER_B });
    idsA = await seed(1, 'matrix-a');
    idsB = await seed(projectB['id'] as number, MARKER_B);
    const role = await admin('post', '/api/organizations/@current/roles/', { name: 'matrix role' });
    const user = await fixture.addUser(`matrix-${randomUUID().slice(0, 8)}@example.com`);
    const membership = await admin('post', `/api/organizations/@current/roles/${String(role['id'])}/role_memberships/`, { user_uuid: user.uuid });
    const access = await admin('post', `/api/projects/1/feature_flags/${idsA.flag_id}/role_access/`, { role_id: role['id'] });
    // A key of the admin user for the key routes to read, change, roll and delete: with no power
    // beyond personal_api_key:read, so the exact-scope keys of those routes may manage it.
    const spare = await admin('post', '/api/personal_api_keys/', { label: 'spare', scopes: ['personal_api_key:read'] });
    Object.assign(idsA, {
      role_id: String(role['id']),
      membership_id: String(membership['id']),
      role_access_id: String(access['id']),
      key_id: String(spare['id']),
    });
    // One key per single scope, and one per multi-scope route's exact set.
    const sets = new Set<string>([...ALL_SCOPES, ...routes.map((r) => requiredScopes(r).join(','))]);
    for (const set of sets) {
      const key = `phx_matrix_${randomUUID().replace(/-/g, '')}`;
      await fixture.addKey(key, set.split(','));
      keyFor.set(set, key);
    }
  });
  afterAll(async () => {
    await fixture.close();
    process.stdout.write(`route matrix: ${routes.length} routes; ${JSON.stringify(counts)}; exact-scope statuses ${JSON.stringify(allowedStatuses)}\n`);
  });

  it('declares every route with a summary and known scopes, and the table is non-trivial', () => {
    expect(routes.length).toBeGreaterThan(80);
    for (const route of routes) for (const scope of requiredScopes(route)) expect(ALL_SCOPES).toContain(scope);
  });

  it('answers every list route as CSV, one row per result of the JSON page', async () => {
    const lists = routes.filter((r) => r.list && r.method === 'get');
    expect(lists.length).toBeGreaterThan(10);
    let rows = 0;
    for (const route of lists) {
      const path = fillPath(route, idsA);
      const json = await send('get', path, ADMIN_KEY);
      const csv = await send('get', `${path}${path.includes('?') ? '&' : '?'}format=csv`, ADMIN_KEY);
      expect([route.path, csv.status, csv.headers['content-type']]).toEqual([route.path, 200, expect.stringMatching(/^text\/csv/)]);
      const results = (Array.isArray(json.body) ? json.body : json.body.results) as Record<string, unknown>[];
      const records = parse(csv.text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
      expect([route.path, records.length]).toEqual([route.path, results.length]);
      if (results[0]?.['id'] !== undefined) expect(records[0]!['id']).toBe(String(results[0]['id']));
      rows += records.length;
    }
    expect(rows).toBeGreaterThan(10);
  });

  it('lets a key with exactly the required scopes through every route', async () => {
    // Deletions last: they remove what later routes address.
    const ordered = [...routes].sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    for (const route of ordered) {
      const key = keyFor.get(requiredScopes(route).join(','))!;
      const res = await send(route.method, fillPath(route, idsA), key, route.example?.());
      if (process.env['ROUTE_MATRIX_VERBOSE']) process.stdout.write(`${res.status} ${route.method} ${route.path}\n`);
      if ([401, 403].includes(res.status) || res.status >= 500) throw new Error(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 300)}`);
      allowedStatuses[res.status] = (allowedStatuses[res.status] ?? 0) + 1;
      counts.scopeAllowed++;
    }
  });

  it('answers 403 naming the missing scope to a key with any other single scope', async () => {
    const cases: [RouteDefinition, Scope][] = [];
    for (const route of routes) {
      const required = requiredScopes(route);
      for (const scope of ALL_SCOPES) if (!required.every((r) => hasScope([scope], r))) cases.push([route, scope]);
    }
    await inBatches(cases, 16, async ([route, scope]) => {
      const missing = requiredScopes(route).find((r) => !hasScope([scope], r))!;
      const res = await send(route.method, fillPath(route, idsA), keyFor.get(scope)!, route.example?.());
      const expected = { type: 'authentication_error', code: 'permission_denied', detail: `API key missing required scope '${missing}'`, attr: null };
      if (res.status !== 403 || JSON.stringify(res.body) !== JSON.stringify(expected))
        throw new Error(`${route.method} ${route.path} with ${scope}: ${res.status} ${res.text.slice(0, 300)}`);
      counts.scopeDenied++;
    });
    expect(counts.scopeDenied).toBe(cases.length);
  });

  it('refuses a key restricted to project A on every route of project B, without B data', async () => {
    const scopedKey = `phx_matrix_a_only_${randomUUID().replace(/-/g, '')}`;
    await fixture.db.query(
      `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams)
       SELECT user_id, 'a only', $1, 'phx_ma...only', '{*}', '{1}' FROM personal_api_keys ORDER BY id LIMIT 1`,
      [hashPersonalApiKey(scopedKey)],
    );
    for (const route of routes.filter(isProjectRoute)) {
      const res = await send(route.method, fillPath(route, { ...idsA, ...idsB }), scopedKey, route.example?.());
      if (![403, 404].includes(res.status) || res.text.includes(MARKER_B))
        throw new Error(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 300)}`);
      counts.projectDenied++;
    }
    // The routes without a project never list B either.
    const listed = await send('get', '/api/projects/', scopedKey);
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(MARKER_B);
    const definitions = await send('get', '/api/feature_flag/local_evaluation', scopedKey);
    expect(definitions.status).toBe(200);
    expect(definitions.text).not.toContain(MARKER_B);
  });

  it("never answers B's objects on project A's routes, whatever ids are named", async () => {
    for (const route of routes.filter((r) => isProjectRoute(r) && /:(?!project_id)/.test(r.path.replace(':project_id', '')))) {
      const ids = { ...idsB, project_id: idsA.project_id, role_id: idsA.role_id, membership_id: idsA.membership_id, key_id: idsA.key_id };
      const res = await send(route.method, fillPath(route, ids), ADMIN_KEY, route.example?.());
      if (res.status >= 500 || res.text.includes(MARKER_B)) throw new Error(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 300)}`);
      counts.crossProjectIds++;
    }
    expect(counts.crossProjectIds).toBeGreaterThan(20);
  });

  it('answers 404 for an unknown project on every project route, whatever the id looks like', async () => {
    const unknown = ['999999', '2147483646', '2147483648', '99999999999999999999', 'abc', '-1', '1.5'];
    for (const route of routes.filter(isProjectRoute)) {
      for (const id of unknown) {
        const res = await send(route.method, fillPath(route, { ...idsA, project_id: id }), ADMIN_KEY, route.example?.());
        if (res.status !== 404 || res.body.code !== 'not_found')
          throw new Error(`${route.method} ${route.path} as ${id}: ${res.status} ${res.text.slice(0, 200)}`);
        counts.unknownProject++;
      }
    }
  });

  it('refuses every project route to a key restricted to another organisation', async () => {
    const key = `phx_matrix_other_org_${randomUUID().replace(/-/g, '')}`;
    await fixture.db.query(
      `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_organizations)
       SELECT user_id, 'other org', $1, 'phx_ot...org', '{*}', $2 FROM personal_api_keys ORDER BY id LIMIT 1`,
      [hashPersonalApiKey(key), [randomUUID()]],
    );
    for (const route of routes.filter((r) => isProjectRoute(r) || r.path.includes(':organization_id'))) {
      const res = await send(route.method, fillPath(route, idsA), key, route.example?.());
      expect([route.path, res.status]).toEqual([route.path, 403]);
    }
  });
});
