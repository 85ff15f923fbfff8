import type { Request, RequestHandler } from 'express';
import { errors } from '@sightline/http';
import { objectBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';
import {
  atLeast,
  controlsFor,
  DEFAULT_FLAG_ACCESS_LEVELS_INFO,
  FLAG_ACCESS_LEVELS,
  putAccessControl,
  serializeControl,
  type AccessControlChange,
  type AccessControlScope,
  type AccessLevel,
} from '../access-control';
import { parseBody } from '../http/drf-fields';
import { FLAG_PATH, loadFlag, type FeatureFlagDeps } from './flag-context';

const FLAG_RESOURCE = 'feature_flag';

/** PostHog's AccessControlViewSetMixin body: access_level (null removes), and a role or an organization_member (neither: everyone). */
function parseControlChange(raw: unknown): AccessControlChange {
  const body = parseBody(raw ?? {});
  if (!('access_level' in body)) throw errors.validation('This field is required.', 'access_level', 'required');
  const level = body['access_level'];
  if (level !== null && !FLAG_ACCESS_LEVELS.includes(level as AccessLevel)) {
    throw errors.validation(`Invalid access level. Must be one of: ${FLAG_ACCESS_LEVELS.join(', ')}`, 'access_level', 'invalid');
  }
  const roleRef = body['role'] ?? null;
  const memberRef = body['organization_member'] ?? null;
  if (roleRef !== null && memberRef !== null) {
    throw errors.validation('You can not scope an access control to both a member and a role.', null, 'invalid');
  }
  return { level: level as AccessLevel | null, roleRef, memberRef };
}

const scopeOf = (req: Request, resourceId: string | null): AccessControlScope => ({
  organizationId: req.principal!.organizationId,
  teamId: req.project!.id,
  resource: FLAG_RESOURCE,
  resourceId,
  actorId: req.principal!.userId,
});

/** What parseControlChange reads; it words a wrong access level itself. */
const controlBody = objectBody(
  {
    access_level: { description: `One of ${FLAG_ACCESS_LEVELS.join(', ')}; null removes the control` },
    role: { description: 'The id of a role of the organisation the control is for' },
    organization_member: { description: 'The uuid of the user the control is for' },
  },
  ['access_level'],
);

/**
 * `access_controls` (rules of one flag) and `global_access_controls` (the project-wide
 * rules for feature flags) in the shape of PostHog's AccessControlViewSetMixin, with its
 * scopes: access_control:read to read, access_control:write to change.
 */
export function createFlagAccessControlsRoutes(deps: FeatureFlagDeps): RouteTable {
  const { db } = deps;
  const routes = new RouteTable();
  routes.inProject((project) => {
    const base = FLAG_PATH;
    const describe = async (req: Request, resourceId: string | null) => ({
      access_controls: (await controlsFor(db, req.project!.id, FLAG_RESOURCE, resourceId)).map(serializeControl),
      ...DEFAULT_FLAG_ACCESS_LEVELS_INFO,
      user_access_level: req.flagAccess!,
      user_can_edit_access_levels: atLeast(req.flagAccess!, 'manager'),
    });
    // A middleware, so the caller's access is checked before the body, as PostHog does.
    const requireManager: RequestHandler = (req, _res, next) => {
      if (!atLeast(req.flagAccess!, 'manager')) throw errors.permissionDenied('Must be manager to modify feature_flag permissions.');
      next();
    };

    project.get(
      `${base}/:id/access_controls`,
      { scope: 'access_control:read', summary: "A flag's access controls" },
      loadFlag(db, 'viewer'),
      async (req, res) => {
        res.json(await describe(req, String(req.flag!.id)));
      },
    );
    project.put(
      `${base}/:id/access_controls`,
      { scope: 'access_control:write', summary: 'Set an access control on a flag', body: controlBody, example: () => ({ access_level: 'editor' }) },
      loadFlag(db, 'viewer'),
      requireManager,
      async (req, res) => {
        const control = await putAccessControl(db, scopeOf(req, String(req.flag!.id)), parseControlChange(req.body));
        if (!control) res.status(204).end();
        else res.json(serializeControl(control));
      },
    );
    project.get(
      `${base}/:id/global_access_controls`,
      { scope: 'access_control:read', summary: "The project's default access to flags" },
      loadFlag(db, 'viewer'),
      async (req, res) => {
        res.json(await describe(req, null));
      },
    );
    // PostHog lets only organisation admins change project-wide rules; Sightline has no
    // organisation roles of that kind, so the access_control:write scope is the gate.
    project.put(
      `${base}/:id/global_access_controls`,
      { scope: 'access_control:write', summary: "Set the project's default access to flags", body: controlBody, example: () => ({ access_level: 'viewer' }) },
      loadFlag(db, 'viewer'),
      async (req, res) => {
        const control = await putAccessControl(db, scopeOf(req, null), parseControlChange(req.body));
        if (!control) res.status(204).end();
        else res.json(serializeControl(control));
      },
    );
  });
  return routes;
}
