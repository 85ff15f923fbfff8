import { Router, type RequestHandler } from 'express';
import { requireScope } from '@sightline/auth';
import { errors } from '@sightline/http';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { echoed, parseBody, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { serializeRoles } from './role.serializer';
import {
  deleteMembership,
  deleteRole,
  FEATURE_FLAGS_ACCESS_LEVELS,
  findRole,
  insertMembership,
  insertRole,
  listRoles,
  roleNameTaken,
  UUID_PATTERN,
  type RoleRow,
} from './roles.repository';
import { findUserIdByUuid } from './users';

declare module 'express-serve-static-core' {
  interface Request {
    organizationId?: string;
    role?: RoleRow;
  }
}

/** PostHog's Role.name max_length. */
const MAX_ROLE_NAME_LENGTH = 200;

/** `:organization_id` is `@current` or the caller's organisation id. */
const organizationAccess: RequestHandler = (req, _res, next) => {
  const raw = String(req.params['organization_id']);
  const own = req.principal!.organizationId;
  if (raw !== '@current' && raw.toLowerCase() !== own.toLowerCase()) {
    return next(UUID_PATTERN.test(raw) ? errors.permissionDenied('You do not have access to this organization.') : errors.notFound());
  }
  req.organizationId = own;
  next();
};

function loadRole(db: Sql): RequestHandler {
  return async (req, _res, next) => {
    const role = await findRole(db, req.organizationId!, String(req.params['role_id']));
    if (!role) return next(errors.notFound());
    req.role = role;
    next();
  };
}

/** Organisation roles and their memberships: `/api/organizations/:organization_id/roles` (scope organization:*). */
export function createRolesRouter(db: Sql): Router {
  const router = Router();
  const base = '/api/organizations/:organization_id/roles';
  const read = [requireScope('organization:read'), organizationAccess];
  const write = [requireScope('organization:write'), organizationAccess];

  router.get(base, ...read, async (req, res) => {
    const limit = queryInteger(req.query['limit'], 100, 1);
    const offset = queryInteger(req.query['offset'], 0, 0);
    const { rows, count } = await listRoles(db, req.organizationId!, { limit, offset });
    res.json(limitOffsetPage(req, { count, limit, offset, results: await serializeRoles(db, rows) }));
  });

  router.post(base, ...write, async (req, res) => {
    const body = parseBody(req.body ?? {});
    if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
    const name = parseString(body['name'], 'name', { maxLength: MAX_ROLE_NAME_LENGTH });
    if (await roleNameTaken(db, req.organizationId!, name)) throw errors.validation('There is already a role with this name.', 'name', 'unique');
    const level = body['feature_flags_access_level'] ?? FEATURE_FLAGS_ACCESS_LEVELS.CAN_ALWAYS_EDIT;
    if (!Object.values(FEATURE_FLAGS_ACCESS_LEVELS).includes(level as 21 | 37)) {
      throw errors.validation(`"${echoed(level)}" is not a valid choice.`, 'feature_flags_access_level', 'invalid_choice');
    }
    const role = await insertRole(db, { organizationId: req.organizationId!, name, level: level as number, createdById: req.principal!.userId });
    res.status(201).json((await serializeRoles(db, [role]))[0]);
  });

  router.get(`${base}/:role_id`, ...read, loadRole(db), async (req, res) => {
    res.json((await serializeRoles(db, [req.role!]))[0]);
  });

  router.delete(`${base}/:role_id`, ...write, loadRole(db), async (req, res) => {
    await deleteRole(db, req.role!.id);
    res.status(204).end();
  });

  const memberships = `${base}/:role_id/role_memberships`;
  router.get(memberships, ...read, loadRole(db), async (req, res) => {
    const [role] = await serializeRoles(db, [req.role!]);
    const limit = queryInteger(req.query['limit'], 100, 1);
    const offset = queryInteger(req.query['offset'], 0, 0);
    res.json(limitOffsetPage(req, { count: role!.members.length, limit, offset, results: role!.members.slice(offset, offset + limit) }));
  });

  router.post(memberships, ...write, loadRole(db), async (req, res) => {
    const body: unknown = req.body ?? {};
    const userUuid = isJsonObject(body) ? body['user_uuid'] : undefined;
    if (userUuid === undefined) throw errors.validation('This field is required.', 'user_uuid', 'required');
    if (typeof userUuid !== 'string' || !UUID_PATTERN.test(userUuid)) throw errors.validation('Must be a valid UUID.', 'user_uuid', 'invalid');
    const userId = await findUserIdByUuid(db, req.organizationId!, userUuid);
    if (userId === null) throw errors.validation('User does not exist.', null, 'invalid');
    const inserted = await insertMembership(db, req.role!.id, userId);
    if (!inserted) throw errors.validation('User is already part of the role.', null, 'invalid');
    const [role] = await serializeRoles(db, [req.role!]);
    res.status(201).json(role!.members.find((m) => m.id === inserted.id));
  });

  router.delete(`${memberships}/:membership_id`, ...write, loadRole(db), async (req, res) => {
    if (!(await deleteMembership(db, req.role!.id, String(req.params['membership_id'])))) throw errors.notFound();
    res.status(204).end();
  });

  return router;
}
