import type { RequestHandler } from 'express';
import { errors } from '@sightline/http';
import { isJsonObject, UUID_PATTERN } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { charField, choiceField, describedBody, nullable, objectBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';
import { parseBody, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { loadRoleRelations } from './role-relations';
import { serializeRoles } from './role.serializer';
import { deleteMembership, deleteRole, FEATURE_FLAGS_ACCESS_LEVELS, findRole, listRoles, type RoleRow } from './roles.repository';
import { addRoleMember, createRole } from './roles.service';

declare module 'express-serve-static-core' {
  interface Request {
    role?: RoleRow;
  }
}

/** PostHog's Role.name max_length. */
const MAX_ROLE_NAME_LENGTH = 200;

function loadRole(db: Sql): RequestHandler {
  return async (req, _res, next) => {
    const role = await findRole(db, req.organizationId!, String(req.params['role_id']));
    if (!role) return next(errors.notFound());
    req.role = role;
    next();
  };
}

const roleBody = objectBody({ name: charField(), feature_flags_access_level: nullable(choiceField(Object.values(FEATURE_FLAGS_ACCESS_LEVELS))) }, ['name']);

/** Organisation roles and their memberships: `/api/organizations/:organization_id/roles` (scope organization:*). */
export function createRolesRoutes(db: Sql): RouteTable {
  const routes = new RouteTable();
  const base = '/api/organizations/:organization_id/roles';
  const read = { scope: 'organization:read' } as const;
  const write = { scope: 'organization:write' } as const;

  routes.get(base, { ...read, summary: "List the organisation's roles", list: true }, async (req, res) => {
    const limit = queryInteger(req.query['limit'], 100, 1);
    const offset = queryInteger(req.query['offset'], 0, 0);
    const { rows, count } = await listRoles(db, req.organizationId!, { limit, offset });
    res.json(limitOffsetPage(req, { count, limit, offset, results: serializeRoles(rows, await loadRoleRelations(db, rows)) }));
  });

  routes.post(
    base,
    { ...write, summary: 'Create a role', body: roleBody, example: () => ({ name: 'Engineers', feature_flags_access_level: 37 }) },
    async (req, res) => {
      const body = parseBody(req.body ?? {});
      if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
      const name = parseString(body['name'], 'name', { maxLength: MAX_ROLE_NAME_LENGTH });
      const role = await createRole(db, {
        organizationId: req.organizationId!,
        name,
        level: body['feature_flags_access_level'],
        createdById: req.principal!.userId,
      });
      res.status(201).json(serializeRoles([role], await loadRoleRelations(db, [role]))[0]);
    },
  );

  routes.get(`${base}/:role_id`, { ...read, summary: 'Retrieve a role' }, loadRole(db), async (req, res) => {
    res.json(serializeRoles([req.role!], await loadRoleRelations(db, [req.role!]))[0]);
  });

  routes.delete(`${base}/:role_id`, { ...write, summary: 'Delete a role' }, loadRole(db), async (req, res) => {
    await deleteRole(db, req.role!.id);
    res.status(204).end();
  });

  const memberships = `${base}/:role_id/role_memberships`;
  routes.get(memberships, { ...read, summary: "List a role's members", list: true }, loadRole(db), async (req, res) => {
    const [role] = serializeRoles([req.role!], await loadRoleRelations(db, [req.role!]));
    const limit = queryInteger(req.query['limit'], 100, 1);
    const offset = queryInteger(req.query['offset'], 0, 0);
    res.json(limitOffsetPage(req, { count: role!.members.length, limit, offset, results: role!.members.slice(offset, offset + limit) }));
  });

  routes.post(
    memberships,
    {
      ...write,
      summary: 'Add a member to a role',
      body: { ...describedBody('A member', { user_uuid: 'The uuid of a user of the organisation' }), required: ['user_uuid'] },
      example: () => ({ user_uuid: '00000000-0000-0000-0000-000000000000' }),
    },
    loadRole(db),
    async (req, res) => {
      const body: unknown = req.body ?? {};
      const userUuid = isJsonObject(body) ? body['user_uuid'] : undefined;
      if (userUuid === undefined) throw errors.validation('This field is required.', 'user_uuid', 'required');
      if (typeof userUuid !== 'string' || !UUID_PATTERN.test(userUuid)) throw errors.validation('Must be a valid UUID.', 'user_uuid', 'invalid');
      const inserted = await addRoleMember(db, req.organizationId!, req.role!, userUuid);
      const [role] = serializeRoles([req.role!], await loadRoleRelations(db, [req.role!]));
      res.status(201).json(role!.members.find((m) => m.id === inserted.id));
    },
  );

  routes.delete(`${memberships}/:membership_id`, { ...write, summary: 'Remove a member from a role' }, loadRole(db), async (req, res) => {
    if (!(await deleteMembership(db, req.role!.id, String(req.params['membership_id'])))) throw errors.notFound();
    res.status(204).end();
  });

  return routes;
}
