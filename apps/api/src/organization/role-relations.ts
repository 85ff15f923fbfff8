import type { Sql } from '@sightline/postgres';
import { listMemberships, type MembershipRow, type RoleRow } from './roles.repository';
import { loadBasicUsers, type BasicUser } from '@sightline/accounts';

/** What roles are shown with: their memberships and the users those and the roles name. */
export interface RoleRelations {
  memberships: MembershipRow[];
  users: Map<number, BasicUser>;
}

export async function loadRoleRelations(db: Sql, roles: readonly RoleRow[]): Promise<RoleRelations> {
  if (roles.length === 0) return { memberships: [], users: new Map() };
  const memberships = await listMemberships(
    db,
    roles.map((r) => r.id),
  );
  const users = await loadBasicUsers(db, [...roles.map((r) => r.created_by_id), ...memberships.map((m) => m.user_id)]);
  return { memberships, users };
}
