import type { Request } from 'express';
import { errors } from '@sightline/http';
import { isJsonObject } from '@sightline/json-input';
import { limitOffsetPage } from '../http/pagination';
import { RouteTable } from '../http/route-registry';
import { atLeast } from '../access-control';
import { queryInteger } from '../http/drf-fields';
import { FLAG_PREFIXES, loadFlag, type FeatureFlagDeps } from './flag-context';
import type { RoleAccessRow } from './flag-role-access.repository';
import { serializeRoleAccess } from './flag-role-access.serializer';
import { findFlagRoleAccess, grantRoleAccess, listFlagRoleAccess, loadRoleAccessRelations, revokeRoleAccess } from './flag-role-access.service';

/** A role access entry's id from the path; anything else names no entry. */
const entryId = (req: Request): number | null => {
  const id = String(req.params['id']);
  return /^\d{1,9}$/.test(id) ? Number(id) : null;
};

/**
 * Legacy EE role access of a flag (`/feature_flags/:feature_flag_id/role_access`): which
 * organisation roles may edit it. Shape of PostHog's FeatureFlagRoleAccessSerializer.
 */
export function createFlagRoleAccessRoutes(deps: FeatureFlagDeps): RouteTable {
  const { db } = deps;
  const routes = new RouteTable();
  const serialized = async (req: Request, rows: RoleAccessRow[]) =>
    serializeRoleAccess(rows, await loadRoleAccessRelations(db, req.flag!, { userId: req.principal!.userId, teamId: req.project!.id }, rows), deps.now());

  for (const prefix of FLAG_PREFIXES) {
    const base = `${prefix}/:feature_flag_id/role_access`;
    const flag = loadFlag(db, 'viewer', 'feature_flag_id');
    const canEdit = (req: Request) => {
      if (!atLeast(req.flagAccess!, 'editor')) throw errors.permissionDenied("You can't edit roles for this feature flag.");
    };

    routes.get(base, { scope: 'feature_flag:read', summary: "List a flag's role access", list: true }, flag, async (req, res) => {
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const { rows, count } = await listFlagRoleAccess(db, req.flag!.id, { limit, offset });
      res.json(limitOffsetPage(req, { count, limit, offset, results: await serialized(req, rows) }));
    });

    routes.post(
      base,
      { scope: 'feature_flag:write', summary: 'Give a role access to a flag', example: () => ({ role_id: '00000000-0000-0000-0000-000000000000' }) },
      flag,
      async (req, res) => {
        canEdit(req);
        const body: unknown = req.body ?? {};
        const roleId = isJsonObject(body) ? body['role_id'] : undefined;
        if (roleId === undefined) throw errors.validation('This field is required.', 'role_id', 'required');
        if (roleId === null) throw errors.validation('This field may not be null.', 'role_id', 'null');
        const row = await grantRoleAccess(db, req.principal!.organizationId, req.flag!.id, roleId);
        res.status(201).json((await serialized(req, [row]))[0]);
      },
    );

    routes.get(`${base}/:id`, { scope: 'feature_flag:read', summary: 'Retrieve a role access entry' }, flag, async (req, res) => {
      const row = await findFlagRoleAccess(db, req.flag!.id, entryId(req));
      res.json((await serialized(req, [row]))[0]);
    });

    routes.delete(`${base}/:id`, { scope: 'feature_flag:write', summary: 'Remove a role access entry' }, flag, async (req, res) => {
      canEdit(req);
      await revokeRoleAccess(db, req.flag!.id, entryId(req));
      res.status(204).end();
    });
  }
  return routes;
}
