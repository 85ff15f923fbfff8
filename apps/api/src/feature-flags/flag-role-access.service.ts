import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { echoed } from '../http/drf-fields';
import { findRole, findRolesByIds, loadRoleRelations, type RoleRelations, type RoleRow } from '../organization';
import type { FlagRow } from './feature-flags.repository';
import { loadFlagRelations, type FlagRelations } from './flag-relations';
import { deleteRoleAccess, findRoleAccess, insertRoleAccess, listRoleAccess, type RoleAccessRow } from './flag-role-access.repository';

/** What role access entries are shown with: their flag and their roles, each with its own relations. */
export interface RoleAccessRelations {
  flag: FlagRow;
  flagRelations: FlagRelations;
  roles: RoleRow[];
  roleRelations: RoleRelations;
}

export async function loadRoleAccessRelations(
  db: Sql,
  flag: FlagRow,
  viewer: { userId: number; teamId: number },
  rows: readonly RoleAccessRow[],
): Promise<RoleAccessRelations> {
  const roles = rows.length === 0 ? [] : await findRolesByIds(db, [...new Set(rows.map((r) => r.role_id))]);
  const [flagRelations, roleRelations] = await Promise.all([loadFlagRelations(db, [flag], viewer), loadRoleRelations(db, roles)]);
  return { flag, flagRelations, roles, roleRelations };
}

export const listFlagRoleAccess = listRoleAccess;

/** The flag's entry `id`, or a 404. */
export async function findFlagRoleAccess(db: Sql, flagId: number, id: number | null): Promise<RoleAccessRow> {
  const row = id === null ? null : await findRoleAccess(db, flagId, id);
  if (!row) throw errors.notFound();
  return row;
}

/** Lets the organisation's role `roleRef` edit the flag; a role that is unknown or already listed is a 400. */
export async function grantRoleAccess(db: Sql, organizationId: string, flagId: number, roleRef: unknown): Promise<RoleAccessRow> {
  const role = await findRole(db, organizationId, String(roleRef));
  if (!role) throw errors.validation(`Invalid pk "${echoed(roleRef)}" - object does not exist.`, 'role_id', 'does_not_exist');
  const row = await insertRoleAccess(db, flagId, role.id);
  if (!row) throw errors.validation('The fields feature_flag, role must make a unique set.', null, 'unique');
  return row;
}

/** Removes the flag's entry `id`, or answers 404. */
export async function revokeRoleAccess(db: Sql, flagId: number, id: number | null): Promise<void> {
  if (id === null || !(await deleteRoleAccess(db, flagId, id))) throw errors.notFound();
}
