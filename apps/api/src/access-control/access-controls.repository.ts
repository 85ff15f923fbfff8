import { randomUUID } from 'node:crypto';
import type { MetadataStore, Sql } from '@sightline/postgres';
import type { AccessLevel } from './access-levels';

/**
 * Access controls of any resource kind (`feature_flag`, and the resources to come): one rule
 * per resource (or project-wide, resource_id null) and subject (a role, a user, or everyone).
 */
export interface AccessControlRow {
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

export const serializeControl = (c: AccessControlRow) => ({
  access_level: c.access_level,
  resource: c.resource,
  resource_id: c.resource_id,
  organization_member: c.user_uuid,
  role: c.role_id,
  created_by: c.created_by_id,
  created_at: new Date(c.created_at).toISOString(),
  updated_at: new Date(c.updated_at).toISOString(),
});

export async function controlsFor(db: Sql, teamId: number, resource: string, resourceId: string | null): Promise<AccessControlRow[]> {
  return db.query<AccessControlRow>(
    `SELECT a.id::text AS id, a.access_level, a.resource, a.resource_id, a.role_id::text AS role_id, u.uuid::text AS user_uuid,
            a.created_by_id, a.created_at, a.updated_at
       FROM access_controls a LEFT JOIN users u ON u.id = a.user_id
      WHERE a.team_id = $1 AND a.resource = $3 AND a.resource_id IS NOT DISTINCT FROM $2
      ORDER BY a.created_at, a.id`,
    [teamId, resourceId, resource],
  );
}

/** A rule as access decisions read it: whom it applies to, on what, at which level. */
export interface AccessRule {
  resource_id: string | null;
  access_level: AccessLevel;
  role_id: string | null;
  user_id: number | null;
}

/** The project's rules for a resource kind that apply to any of `resourceIds`, project-wide ones included. */
export async function rulesFor(db: Sql, teamId: number, resource: string, resourceIds: readonly string[]): Promise<AccessRule[]> {
  return db.query<AccessRule>(
    `SELECT resource_id, access_level, role_id::text AS role_id, user_id FROM access_controls
      WHERE team_id = $1 AND resource = $3 AND (resource_id IS NULL OR resource_id = ANY($2::text[]))`,
    [teamId, resourceIds, resource],
  );
}

/** Who a rule applies to: a role, a user, or (both null) everyone. */
export interface AccessControlSubject {
  teamId: number;
  resource: string;
  resourceId: string | null;
  roleId: string | null;
  userId: number | null;
}

/** Sets the subject's level on the resource (null removes the rule); answers the rule's id, or null when removed. */
export async function setAccessControl(
  db: MetadataStore,
  subject: AccessControlSubject,
  level: AccessLevel | null,
  createdById: number,
): Promise<string | null> {
  const params = [subject.teamId, subject.resourceId, subject.roleId, subject.userId, subject.resource];
  const match = `team_id = $1 AND resource = $5 AND resource_id IS NOT DISTINCT FROM $2
                 AND role_id IS NOT DISTINCT FROM $3::uuid AND user_id IS NOT DISTINCT FROM $4::int`;
  if (level === null) {
    await db.query(`DELETE FROM access_controls WHERE ${match}`, params);
    return null;
  }
  return db.transaction(async (tx) => {
    const [updated] = await tx.query<{ id: string }>(
      `UPDATE access_controls SET access_level = $6, updated_at = now() WHERE ${match} RETURNING id::text AS id`,
      [...params, level],
    );
    if (updated) return updated.id;
    const [inserted] = await tx.query<{ id: string }>(
      `INSERT INTO access_controls (id, team_id, resource, resource_id, access_level, role_id, user_id, created_by_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id::text AS id`,
      [randomUUID(), subject.teamId, subject.resource, subject.resourceId, level, subject.roleId, subject.userId, createdById],
    );
    return inserted!.id;
  });
}
