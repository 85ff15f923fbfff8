import type { RoleRelations } from './role-relations';
import type { MembershipRow, RoleRow } from './roles.repository';

/** Roles in PostHog's RoleSerializer shape, members included. */
export function serializeRoles(roles: readonly RoleRow[], related: RoleRelations) {
  const { memberships, users } = related;
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
