import type { Request, RequestHandler } from 'express';
import { errors } from '@sightline/http';
import { isJsonObject } from '@sightline/json-input';
import { limitOffsetPage } from '../http/pagination';
import { describedBody } from '../http/body-fields';
import { parseObjectId } from '../http/load-by-id';
import { RouteTable } from '../http/route-registry';
import { atLeast } from '../access-control';
import { queryInteger } from '../http/drf-fields';
import { FLAG_PATH, loadFlag, type FeatureFlagDeps } from './flag-context';
import type { RoleAccessRow } from './flag-role-access.repository';
import { serializeRoleAccess } from './flag-role-access.serializer';
import { findFlagRoleAccess, grantRoleAccess, listFlagRoleAccess, loadRoleAccessRelations, revokeRoleAccess } from './flag-role-access.service';

/** A role access entry's id from the path; anything else names no entry. */
const entryId = (req: Request): number | null => parseObjectId(req.params['id']);

/**
 * Legacy EE role access of a flag (`/feature_flags/:feature_flag_id/role_access`): which
 * organisation roles may edit it. Shape of PostHog's FeatureFlagRoleAccessSerializer.
 */
export function createFlagRoleAccessRoutes(deps: FeatureFlagDeps): RouteTable {
  const { db } = deps;
  const routes = new RouteTable();
  const serialized = async (req: Request, rows: RoleAccessRow[]) =>
    serializeRoleAccess(rows, await loadRoleAccessRelations(db, req.flag!, { userId: req.principal!.userId, teamId: req.project!.id }, rows), deps.now());

  routes.inProject((project) => {
    const base = `${FLAG_PATH}/:feature_flag_id/role_access`;
    const flag = loadFlag(db, 'viewer', 'feature_flag_id');
    const canEdit = (req: Request) => {
      if (!atLeast(req.flagAccess!, 'editor')) throw errors.permissionDenied("You can't edit roles for this feature flag.");
    };
    // Before the body is checked, as PostHog checks the caller's access to the flag first.
    const editor: RequestHandler = (req, _res, next) => {
      canEdit(req);
      next();
    };

    project.get(base, { scope: 'feature_flag:read', summary: "List a flag's role access", list: true }, flag, async (req, res) => {
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const { rows, count } = await listFlagRoleAccess(db, req.flag!.id, { limit, offset });
      res.json(limitOffsetPage(req, { count, limit, offset, results: await serialized(req, rows) }));
    });

    project.post(
      base,
      {
        scope: 'feature_flag:write',
        summary: 'Give a role access to a flag',
        body: { ...describedBody('A role', { role_id: 'The id (uuid) of a role of the organisation' }), required: ['role_id'] },
        example: () => ({ role_id: '00000000-0000-0000-0000-000000000000' }),
      },
      flag,
      editor,
      async (req, res) => {
        const body: unknown = req.body ?? {};
        const roleId = isJsonObject(body) ? body['role_id'] : undefined;
        if (roleId === undefined) throw errors.validation('This field is required.', 'role_id', 'required');
        if (roleId === null) throw errors.validation('This field may not be null.', 'role_id', 'null');
        const row = await grantRoleAccess(db, req.principal!.organizationId, req.flag!.id, roleId);
        res.status(201).json((await serialized(req, [row]))[0]);
      },
    );

    project.get(`${base}/:id`, { scope: 'feature_flag:read', summary: 'Retrieve a role access entry' }, flag, async (req, res) => {
      const row = await findFlagRoleAccess(db, req.flag!.id, entryId(req));
      res.json((await serialized(req, [row]))[0]);
    });

    project.delete(`${base}/:id`, { scope: 'feature_flag:write', summary: 'Remove a role access entry' }, flag, async (req, res) => {
      canEdit(req);
      await revokeRoleAccess(db, req.flag!.id, entryId(req));
      res.status(204).end();
    });
  });
  return routes;
}
