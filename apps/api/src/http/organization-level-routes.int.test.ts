/**
 * Routes outside any project act on the whole organisation (roles, which govern flag access in
 * every project; new projects; the jobs), so a key restricted to projects may not use them, as
 * PostHog refuses such keys on views not based on a project. Only routes that narrow what they
 * answer and do to the key's projects let it through. Generated from the route registry, so a new
 * organisation-level route is covered without new test code.
 */
import request from 'supertest';
import { hashPersonalApiKey } from '@sightline/auth';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache } from '@sightline/flag-store';
import type { JobOperator } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createApiRouteTable } from '../app';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';
import { fillPath } from '../testing/route-paths';
import { isProjectRoute, type RouteDefinition } from './route-registry';

describe('organisation-level routes and keys restricted to projects', () => {
  let f: FlagFixture;
  let projectTwo: number;
  let routes: RouteDefinition[];
  const admin = bearer(ADMIN_KEY);
  const restricted = 'phx_org_level_restricted_to_two';
  const orgRestricted = 'phx_org_level_restricted_to_org';

  /** The embedded service's jobs routes are organisation-level too; this operator runs nothing. */
  const jobs: JobOperator = {
    names: ['person-event-deletion'],
    status: async () => ({}) as Awaited<ReturnType<JobOperator['status']>>,
    run: async () => ({}),
  };

  beforeAll(async () => {
    f = await createFlagFixture('orglevel', () => Date.parse('2024-01-10T15:00:00Z'), 'pg', { jobs });
    projectTwo = (await request(f.app).post('/api/projects/').set(admin).send({ name: 'Two' })).body.id as number;
    const definitions = createFlagDefinitionsCache({ db: f.db, channel: createInMemoryInvalidation() });
    routes = createApiRouteTable({ db: f.db, ch: f.ch, logger: silentLogger(), metrics: createMetrics(), jobs }, definitions).routes;
    const insert = (value: string, teams: number[] | null, orgs: string[] | null) =>
      f.db.query(
        `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams, scoped_organizations)
         VALUES ($1, $2, $3, 'phx_or...evel', '{*}', $4, $5)`,
        [f.adminUserId, value, hashPersonalApiKey(value), teams, orgs],
      );
    await insert(restricted, [projectTwo], null);
    await insert(orgRestricted, null, [f.organizationId]);
  });
  afterAll(() => f.close());

  it('refuses a key restricted to project 2 every role write, and lets the organisation keys make them', async () => {
    const roles = '/api/organizations/@current/roles/';
    const created = await request(f.app).post(roles).set(bearer(restricted)).send({ name: 'From project two' });
    expect([created.status, created.body.code]).toEqual([403, 'permission_denied']);
    expect(await f.db.query(`SELECT 1 FROM roles WHERE name = 'From project two'`)).toHaveLength(0);

    const role = await request(f.app).post(roles).set(bearer(orgRestricted)).send({ name: 'Engineers' });
    expect(role.status).toBe(201);
    const user = await f.addUser('member@example.com');
    const deleteRole = await request(f.app).delete(`${roles}${role.body.id}/`).set(bearer(restricted));
    expect(deleteRole.status).toBe(403);
    const member = await request(f.app).post(`${roles}${role.body.id}/role_memberships/`).set(bearer(restricted)).send({ user_uuid: user.uuid });
    expect(member.status).toBe(403);
    expect((await request(f.app).get(`${roles}${role.body.id}/`).set(admin)).body.members).toEqual([]);
    expect((await request(f.app).delete(`${roles}${role.body.id}/`).set(admin)).status).toBe(204);
  });

  it('refuses every route outside a project to a key restricted to projects, unless it narrows to them', async () => {
    const outside = routes.filter((r) => !isProjectRoute(r));
    expect(outside.length).toBeGreaterThan(15);
    let refused = 0;
    for (const route of outside) {
      const path = fillPath(route, { project_id: String(projectTwo), organization_id: '@current', job: 'person-event-deletion' });
      const req = request(f.app)[route.method](path).set(bearer(restricted));
      const res = await (route.method === 'get' || route.method === 'delete' ? req : req.send((route.example?.() ?? {}) as object));
      if (route.projectRestrictedKeys === 'narrowed') {
        // Key routes keep their own rule (a key may still read itself, say); nothing else stops it here.
        if (res.status === 403 && /restricted to projects/.test(String(res.body.detail)))
          throw new Error(`${route.method} ${route.path} refused a narrowed route: ${res.text}`);
      } else {
        if (res.status !== 403 || !/restricted to projects/.test(String(res.body.detail)))
          throw new Error(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 200)}`);
        refused++;
      }
    }
    // The roles, project creation and the jobs at least.
    expect(refused).toBeGreaterThanOrEqual(9);
    // What narrows to the key's projects answers only them.
    const projects = await request(f.app).get('/api/projects/').set(bearer(restricted));
    expect((projects.body.results as { id: number }[]).map((p) => p.id)).toEqual([projectTwo]);
  });
});
