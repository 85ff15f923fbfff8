import { findUserById, listProjectsFor } from '@sightline/accounts';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { RouteTable } from '../http/route-registry';

/**
 * GET /api/users/@me/: the caller (by session or personal key) and their current project, as
 * PostHog's user endpoint answers (`team` is the first project the caller may use).
 */
export function createUsersRoutes(db: Sql): RouteTable {
  const routes = new RouteTable();
  routes.get('/api/users/@me', { scope: 'user:read', summary: 'The caller and their current project', projectRestrictedKeys: 'narrowed' }, async (req, res) => {
    const principal = req.principal!;
    const user = await findUserById(db, principal.userId);
    if (!user) throw errors.notFound('User not found.');
    const [team] = await listProjectsFor(db, principal);
    res.json({
      uuid: user.uuid,
      email: user.email,
      first_name: user.firstName,
      organization: { id: user.organizationId },
      team: team ? { id: team.id, uuid: team.uuid, name: team.name, timezone: team.timezone, api_token: team.api_token } : null,
    });
  });
  return routes;
}
