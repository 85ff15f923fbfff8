import { randomUUID } from 'node:crypto';
import { UUID_PATTERN } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';

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

export interface MembershipRow {
  id: string;
  role_id: string;
  user_id: number;
  joined_at: Date;
  updated_at: Date;
}

export async function findRole(db: Sql, organizationId: string, id: string): Promise<RoleRow | null> {
  if (!UUID_PATTERN.test(id)) return null;
  const rows = await db.query<RoleRow>('SELECT * FROM roles WHERE id = $1 AND organization_id = $2', [id, organizationId]);
  return rows[0] ?? null;
}

/** Roles by id, of any organisation: the caller has already scoped the ids. */
export async function findRolesByIds(db: Sql, ids: readonly string[]): Promise<RoleRow[]> {
  if (ids.length === 0) return [];
  return db.query<RoleRow>('SELECT * FROM roles WHERE id = ANY($1::uuid[])', [ids]);
}

export async function listRoles(db: Sql, organizationId: string, page: { limit: number; offset: number }): Promise<{ rows: RoleRow[]; count: number }> {
  const [rows, count] = await Promise.all([
    db.query<RoleRow>('SELECT * FROM roles WHERE organization_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3', [organizationId, page.limit, page.offset]),
    db.query<{ n: string }>('SELECT count(*) AS n FROM roles WHERE organization_id = $1', [organizationId]),
  ]);
  return { rows, count: Number(count[0]!.n) };
}

/** PostHog compares role names case-insensitively within an organisation. */
export async function roleNameTaken(db: Sql, organizationId: string, name: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM roles WHERE organization_id = $1 AND lower(name) = lower($2)', [organizationId, name])).length > 0;
}

export async function insertRole(db: Sql, role: { organizationId: string; name: string; level: number; createdById: number }): Promise<RoleRow> {
  const [row] = await db.query<RoleRow>(
    'INSERT INTO roles (id, organization_id, name, feature_flags_access_level, created_by_id) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [randomUUID(), role.organizationId, role.name, role.level, role.createdById],
  );
  return row!;
}

export async function deleteRole(db: Sql, id: string): Promise<void> {
  await db.query('DELETE FROM roles WHERE id = $1', [id]);
}

export async function listMemberships(db: Sql, roleIds: readonly string[]): Promise<MembershipRow[]> {
  return db.query<MembershipRow>(
    'SELECT id::text AS id, role_id::text AS role_id, user_id, joined_at, updated_at FROM role_memberships WHERE role_id = ANY($1::uuid[]) ORDER BY joined_at, id',
    [roleIds],
  );
}

/** The ids of the roles the user is a member of. */
export async function roleIdsOfUser(db: Sql, userId: number): Promise<string[]> {
  return (await db.query<{ role_id: string }>('SELECT role_id FROM role_memberships WHERE user_id = $1', [userId])).map((r) => r.role_id);
}

/** The new membership, or null when the user already had one. */
export async function insertMembership(db: Sql, roleId: string, userId: number): Promise<MembershipRow | null> {
  const rows = await db.query<MembershipRow>(
    `INSERT INTO role_memberships (id, role_id, user_id) VALUES ($1, $2, $3) ON CONFLICT (role_id, user_id) DO NOTHING
     RETURNING id::text AS id, role_id::text AS role_id, user_id, joined_at, updated_at`,
    [randomUUID(), roleId, userId],
  );
  return rows[0] ?? null;
}

/** Whether a membership was deleted. */
export async function deleteMembership(db: Sql, roleId: string, membershipId: string): Promise<boolean> {
  if (!UUID_PATTERN.test(membershipId)) return false;
  return (await db.query('DELETE FROM role_memberships WHERE id = $1 AND role_id = $2 RETURNING id', [membershipId, roleId])).length > 0;
}
