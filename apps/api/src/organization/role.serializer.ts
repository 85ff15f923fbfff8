import type { Sql } from '@sightline/postgres';
import { listMemberships, type MembershipRow, type RoleRow } from './roles.repository';
import { loadBasicUsers } from './users';

/** Roles in PostHog's RoleSerializer shape, members included. */
export async function serializeRoles(db: Sql, roles: readonly RoleRow[]) {
  if (roles.length === 0) return [];
  const memberships = await listMemberships(
    db,
    roles.map((r) => r.id),
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
