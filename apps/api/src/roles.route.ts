import { randomUUID } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import { requireScope } from '@sightline/auth';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { isPlainObject, parseBody, parseString, queryInteger } from './feature-flags/drf-fields';
import { limitOffsetPage } from './pagination';
import { loadBasicUsers } from './users';

/** Legacy organisation resource access levels a role can give for feature flags. */
export const FEATURE_FLAGS_ACCESS_LEVELS = { CAN_ONLY_VIEW: 21, CAN_ALWAYS_EDIT: 37 } as const;

export interface RoleRow {
  id: string;
  organization_id: string;
  name: string;
  feature_flags_access_level: number;
  created_by_id: number | null;
  created_at: Date;
}

interface MembershipRow {
  id: string;
  role_id: string;
  user_id: number;
  joined_at: Date;
  updated_at: Date;
}

declare module 'express-serve-static-core' {
  interface Request {
    organizationId?: string;
    role?: RoleRow;
  }
}

/** PostHog's Role.name max_length. */
const MAX_ROLE_NAME_LENGTH = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `:organization_id` is `@current` or the caller's organisation id. */
const organizationAccess: RequestHandler = (req, _res, next) => {
  const raw = String(req.params['organization_id']);
  const own = req.principal!.organizationId;
  if (raw !== '@current' && raw.toLowerCase() !== own.toLowerCase()) {
    return next(UUID.test(raw) ? errors.permissionDenied('You do not have access to this organization.') : errors.notFound());
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

/** Roles in PostHog's RoleSerializer shape, members included. */
export async function serializeRoles(db: Sql, roles: readonly RoleRow[]) {
  if (roles.length === 0) return [];
  const memberships = await db.query<MembershipRow>(
    'SELECT id::text AS id, role_id::text AS role_id, user_id, joined_at, updated_at FROM role_memberships WHERE role_id = ANY($1::uuid[]) ORDER BY joined_at, id',
    [roles.map((r) => r.id)],
  );
  const users = await loadBasicUsers(db, [...roles.map((r) => r.created_by_id), ...memberships.map((m) => m.user_id)]);
  const membership = (m: MembershipRow) => ({
    id: m.id,
    role_id: m.role_id,
    user: users.get(m.user_id) ?? null,
    joined_at: new Date(m.joined_at).toISOString(),
    updated_at: new Date(m.updated_at).toISOString(),
  });
  return roles.map((role) => ({
    id: role.id,
    name: role.name,
    feature_flags_access_level: role.feature_flags_access_level,
    created_at: new Date(role.created_at).toISOString(),
    created_by: (role.created_by_id !== null && users.get(role.created_by_id)) || null,
    members: memberships.filter((m) => m.role_id === role.id).map(membership),
    is_default: false,
  }));
}

export async function findRole(db: Sql, organizationId: string, id: string): Promise<RoleRow | null> {
  if (!UUID.test(id)) return null;
  const rows = await db.query<RoleRow>('SELECT * FROM roles WHERE id = $1 AND organization_id = $2', [id, organizationId]);
  return rows[0] ?? null;
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
    const [rows, count] = await Promise.all([
      db.query<RoleRow>('SELECT * FROM roles WHERE organization_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3', [req.organizationId, limit, offset]),
      db.query<{ n: string }>('SELECT count(*) AS n FROM roles WHERE organization_id = $1', [req.organizationId]),
    ]);
    res.json(limitOffsetPage(req, { count: Number(count[0]!.n), limit, offset, results: await serializeRoles(db, rows) }));
  });

  router.post(base, ...write, async (req, res) => {
    const body = parseBody(req.body ?? {});
    if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
    const name = parseString(body['name'], 'name', { maxLength: MAX_ROLE_NAME_LENGTH });
    const taken = await db.query('SELECT 1 FROM roles WHERE organization_id = $1 AND lower(name) = lower($2)', [req.organizationId, name]);
    if (taken.length > 0) throw errors.validation('There is already a role with this name.', 'name', 'unique');
    const level = body['feature_flags_access_level'] ?? FEATURE_FLAGS_ACCESS_LEVELS.CAN_ALWAYS_EDIT;
    if (!Object.values(FEATURE_FLAGS_ACCESS_LEVELS).includes(level as 21 | 37)) {
      throw errors.validation(`"${String(level)}" is not a valid choice.`, 'feature_flags_access_level', 'invalid_choice');
    }
    const [role] = await db.query<RoleRow>(
      'INSERT INTO roles (id, organization_id, name, feature_flags_access_level, created_by_id) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [randomUUID(), req.organizationId, name, level, req.principal!.userId],
    );
    res.status(201).json((await serializeRoles(db, [role!]))[0]);
  });

  router.get(`${base}/:role_id`, ...read, loadRole(db), async (req, res) => {
    res.json((await serializeRoles(db, [req.role!]))[0]);
  });

  router.delete(`${base}/:role_id`, ...write, loadRole(db), async (req, res) => {
    await db.query('DELETE FROM roles WHERE id = $1', [req.role!.id]);
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
    const userUuid = isPlainObject(body) ? body['user_uuid'] : undefined;
    if (userUuid === undefined) throw errors.validation('This field is required.', 'user_uuid', 'required');
    if (typeof userUuid !== 'string' || !UUID.test(userUuid)) throw errors.validation('Must be a valid UUID.', 'user_uuid', 'invalid');
    const [user] = await db.query<{ id: number }>('SELECT id FROM users WHERE uuid = $1 AND organization_id = $2', [userUuid, req.organizationId]);
    if (!user) throw errors.validation('User does not exist.', null, 'invalid');
    const inserted = await db.query<MembershipRow>(
      `INSERT INTO role_memberships (id, role_id, user_id) VALUES ($1, $2, $3) ON CONFLICT (role_id, user_id) DO NOTHING
       RETURNING id::text AS id, role_id::text AS role_id, user_id, joined_at, updated_at`,
      [randomUUID(), req.role!.id, user.id],
    );
    if (!inserted[0]) throw errors.validation('User is already part of the role.', null, 'invalid');
    const [role] = await serializeRoles(db, [req.role!]);
    res.status(201).json(role!.members.find((m) => m.id === inserted[0]!.id));
  });

  router.delete(`${memberships}/:membership_id`, ...write, loadRole(db), async (req, res) => {
    const id = String(req.params['membership_id']);
    const deleted = UUID.test(id) ? await db.query('DELETE FROM role_memberships WHERE id = $1 AND role_id = $2 RETURNING id', [id, req.role!.id]) : [];
    if (deleted.length === 0) throw errors.notFound();
    res.status(204).end();
  });

  return router;
}
