import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import { requireScope } from '@sightline/auth';
import { errors } from '@sightline/http';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { projectAccess } from '../http/project-access';
import { findRole } from '../organization/roles.repository';
import { atLeast, DEFAULT_FLAG_ACCESS_LEVELS_INFO, FLAG_ACCESS_LEVELS, type AccessLevel } from '../access-control/access-levels';
import { parseBody } from '../http/drf-fields';
import { FLAG_PREFIXES, loadFlag, type FeatureFlagDeps } from './flag-context';

interface AccessControlRow {
  id: string;
  access_level: AccessLevel;
  resource: string;
  resource_id: string | null;
  role_id: string | null;
  user_uuid: string | null;
  created_by_id: number | null;
  created_at: Date;
  updated_at: Date;
}

const serializeControl = (c: AccessControlRow) => ({
  access_level: c.access_level,
  resource: c.resource,
  resource_id: c.resource_id,
  organization_member: c.user_uuid,
  role: c.role_id,
  created_by: c.created_by_id,
  created_at: new Date(c.created_at).toISOString(),
  updated_at: new Date(c.updated_at).toISOString(),
});

async function controlsFor(db: Sql, teamId: number, resourceId: string | null): Promise<AccessControlRow[]> {
  return db.query<AccessControlRow>(
    `SELECT a.id::text AS id, a.access_level, a.resource, a.resource_id, a.role_id::text AS role_id, u.uuid::text AS user_uuid,
            a.created_by_id, a.created_at, a.updated_at
       FROM access_controls a LEFT JOIN users u ON u.id = a.user_id
      WHERE a.team_id = $1 AND a.resource = 'feature_flag' AND a.resource_id IS NOT DISTINCT FROM $2
      ORDER BY a.created_at, a.id`,
    [teamId, resourceId],
  );
}

/**
 * Upserts (or, with access_level null, removes) one access control, as PostHog's
 * AccessControlViewSetMixin._update_access_controls does. `organization_member` names a
 * user of the organisation by uuid (Sightline has no separate membership ids).
 */
async function putControl(db: MetadataStore, req: Request, resourceId: string | null): Promise<AccessControlRow | null> {
  const body = parseBody(req.body ?? {});
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
  let roleId: string | null = null;
  let userId: number | null = null;
  if (roleRef !== null) {
    const role = await findRole(db, req.principal!.organizationId, String(roleRef));
    if (!role) throw errors.validation(`Invalid pk "${String(roleRef)}" - object does not exist.`, 'role', 'does_not_exist');
    roleId = role.id;
  }
  if (memberRef !== null) {
    const uuid = String(memberRef);
    const users = /^[0-9a-f-]{36}$/i.test(uuid)
      ? await db.query<{ id: number }>('SELECT id FROM users WHERE uuid = $1 AND organization_id = $2', [uuid, req.principal!.organizationId])
      : [];
    if (!users[0]) {
      throw errors.validation(
        `Invalid organization member id. Use the user's uuid (Sightline has no separate membership ids).`,
        'organization_member',
        'does_not_exist',
      );
    }
    userId = users[0].id;
  }
  const teamId = req.project!.id;
  const subject = [teamId, resourceId, roleId, userId];
  const match = `team_id = $1 AND resource = 'feature_flag' AND resource_id IS NOT DISTINCT FROM $2
                 AND role_id IS NOT DISTINCT FROM $3::uuid AND user_id IS NOT DISTINCT FROM $4::int`;
  if (level === null) {
    await db.query(`DELETE FROM access_controls WHERE ${match}`, subject);
    return null;
  }
  const id = await db.transaction(async (tx) => {
    const [updated] = await tx.query<{ id: string }>(
      `UPDATE access_controls SET access_level = $5, updated_at = now() WHERE ${match} RETURNING id::text AS id`,
      [...subject, level],
    );
    if (updated) return updated.id;
    const [inserted] = await tx.query<{ id: string }>(
      `INSERT INTO access_controls (id, team_id, resource, resource_id, access_level, role_id, user_id, created_by_id)
       VALUES ($1, $2, 'feature_flag', $3, $4, $5, $6, $7) RETURNING id::text AS id`,
      [randomUUID(), teamId, resourceId, level, roleId, userId, req.principal!.userId],
    );
    return inserted!.id;
  });
  return (await controlsFor(db, teamId, resourceId)).find((c) => c.id === id)!;
}

/**
 * `access_controls` (rules of one flag) and `global_access_controls` (the project-wide
 * rules for feature flags) in the shape of PostHog's AccessControlViewSetMixin, with its
 * scopes: access_control:read to read, access_control:write to change.
 */
export function createFlagAccessControlsRouter(deps: FeatureFlagDeps): Router {
  const { db } = deps;
  const router = Router();
  for (const base of FLAG_PREFIXES) {
    const describe = async (req: Request, resourceId: string | null) => ({
      access_controls: (await controlsFor(db, req.project!.id, resourceId)).map(serializeControl),
      ...DEFAULT_FLAG_ACCESS_LEVELS_INFO,
      user_access_level: req.flagAccess!,
      user_can_edit_access_levels: atLeast(req.flagAccess!, 'manager'),
    });
    const requireManager = (req: Request) => {
      if (!atLeast(req.flagAccess!, 'manager')) throw errors.permissionDenied('Must be manager to modify feature_flag permissions.');
    };

    router.get(`${base}/:id/access_controls`, requireScope('access_control:read'), projectAccess(db), loadFlag(db, 'viewer'), async (req, res) => {
      res.json(await describe(req, String(req.flag!.id)));
    });
    router.put(`${base}/:id/access_controls`, requireScope('access_control:write'), projectAccess(db), loadFlag(db, 'viewer'), async (req, res) => {
      requireManager(req);
      const control = await putControl(db, req, String(req.flag!.id));
      if (!control) res.status(204).end();
      else res.json(serializeControl(control));
    });
    router.get(`${base}/:id/global_access_controls`, requireScope('access_control:read'), projectAccess(db), loadFlag(db, 'viewer'), async (req, res) => {
      res.json(await describe(req, null));
    });
    // PostHog lets only organisation admins change project-wide rules; Sightline has no
    // organisation roles of that kind, so the access_control:write scope is the gate.
    router.put(`${base}/:id/global_access_controls`, requireScope('access_control:write'), projectAccess(db), loadFlag(db, 'viewer'), async (req, res) => {
      const control = await putControl(db, req, null);
      if (!control) res.status(204).end();
      else res.json(serializeControl(control));
    });
  }
  return router;
}
