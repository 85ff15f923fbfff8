import type { Request, RequestHandler } from 'express';
import { errors } from '@sightline/http';
import { isJsonObject } from '@sightline/json-input';
import { limitOffsetPage } from '../http/pagination';
import { describedBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';
import { serializeRoles } from '../organization/role.serializer';
import { findRole, type RoleRow } from '../organization/roles.repository';
import { atLeast } from '../access-control/access-levels';
import { echoed, queryInteger } from '../http/drf-fields';
import { FLAG_PATH, loadFlag, type FeatureFlagDeps } from './flag-context';
import { serializeFlag } from './feature-flag.serializer';

interface RoleAccessRow {
  id: number;
  role_id: string;
  added_at: Date;
  updated_at: Date;
}

/**
 * Legacy EE role access of a flag (`/feature_flags/:feature_flag_id/role_access`): which
 * organisation roles may edit it. Shape of PostHog's FeatureFlagRoleAccessSerializer.
 */
export function createFlagRoleAccessRoutes(deps: FeatureFlagDeps): RouteTable {
  const { db } = deps;
  const routes = new RouteTable();

  async function serialize(req: Request, rows: RoleAccessRow[]) {
    if (rows.length === 0) return [];
    const roles = await db.query<RoleRow>('SELECT * FROM roles WHERE id = ANY($1::uuid[])', [rows.map((r) => r.role_id)]);
    const serializedRoles = new Map((await serializeRoles(db, roles)).map((r) => [r.id, r]));
    const flag = await serializeFlag(db, req.flag!, { userId: req.principal!.userId, teamId: req.project!.id }, deps.now());
    return rows.map((row) => ({
      id: row.id,
      feature_flag: flag,
      role: serializedRoles.get(row.role_id) ?? null,
      added_at: new Date(row.added_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    }));
  }

  const columns = 'id, role_id::text AS role_id, added_at, updated_at';

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
      const [rows, count] = await Promise.all([
        db.query<RoleAccessRow>(`SELECT ${columns} FROM feature_flag_role_access WHERE feature_flag_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, [
          req.flag!.id,
          limit,
          offset,
        ]),
        db.query<{ n: string }>('SELECT count(*) AS n FROM feature_flag_role_access WHERE feature_flag_id = $1', [req.flag!.id]),
      ]);
      res.json(limitOffsetPage(req, { count: Number(count[0]!.n), limit, offset, results: await serialize(req, rows) }));
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
        const role = await findRole(db, req.principal!.organizationId, String(roleId));
        if (!role) throw errors.validation(`Invalid pk "${echoed(roleId)}" - object does not exist.`, 'role_id', 'does_not_exist');
        const rows = await db.query<RoleAccessRow>(
          `INSERT INTO feature_flag_role_access (feature_flag_id, role_id) VALUES ($1, $2)
         ON CONFLICT (feature_flag_id, role_id) DO NOTHING RETURNING ${columns}`,
          [req.flag!.id, role.id],
        );
        if (!rows[0]) throw errors.validation('The fields feature_flag, role must make a unique set.', null, 'unique');
        res.status(201).json((await serialize(req, rows))[0]);
      },
    );

    project.get(`${base}/:id`, { scope: 'feature_flag:read', summary: 'Retrieve a role access entry' }, flag, async (req, res) => {
      const id = String(req.params['id']);
      const rows = /^\d{1,9}$/.test(id)
        ? await db.query<RoleAccessRow>(`SELECT ${columns} FROM feature_flag_role_access WHERE id = $1 AND feature_flag_id = $2`, [Number(id), req.flag!.id])
        : [];
      if (!rows[0]) throw errors.notFound();
      res.json((await serialize(req, rows))[0]);
    });

    project.delete(`${base}/:id`, { scope: 'feature_flag:write', summary: 'Remove a role access entry' }, flag, async (req, res) => {
      canEdit(req);
      const id = String(req.params['id']);
      const deleted = /^\d{1,9}$/.test(id)
        ? await db.query('DELETE FROM feature_flag_role_access WHERE id = $1 AND feature_flag_id = $2 RETURNING id', [Number(id), req.flag!.id])
        : [];
      if (deleted.length === 0) throw errors.notFound();
      res.status(204).end();
    });
  });
  return routes;
}
