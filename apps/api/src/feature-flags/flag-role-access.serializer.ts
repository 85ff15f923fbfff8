import { serializeRoles } from '../organization';
import { serializeFlag } from './feature-flag.serializer';
import type { RoleAccessRow } from './flag-role-access.repository';
import type { RoleAccessRelations } from './flag-role-access.service';

/** Role access entries in the shape of PostHog's FeatureFlagRoleAccessSerializer. */
export function serializeRoleAccess(rows: readonly RoleAccessRow[], related: RoleAccessRelations, nowMs: number) {
  if (rows.length === 0) return [];
  const flag = serializeFlag(related.flag, related.flagRelations, nowMs);
  const roles = new Map(serializeRoles(related.roles, related.roleRelations).map((r) => [r.id, r]));
  return rows.map((row) => ({
    id: row.id,
    feature_flag: flag,
    role: roles.get(row.role_id) ?? null,
    added_at: new Date(row.added_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  }));
}
