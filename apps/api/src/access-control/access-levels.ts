import type { Sql } from '@sightline/postgres';

/** PostHog's access levels for a feature flag, lowest first (rbac/user_access_control.py). */
export const FLAG_ACCESS_LEVELS = ['none', 'viewer', 'editor', 'manager'] as const;
export type AccessLevel = (typeof FLAG_ACCESS_LEVELS)[number];
export const DEFAULT_FLAG_ACCESS_LEVEL: AccessLevel = 'editor';

/** The level bounds PostHog reports with a resource's access controls. */
export const DEFAULT_FLAG_ACCESS_LEVELS_INFO = {
  available_access_levels: [...FLAG_ACCESS_LEVELS],
  default_access_level: DEFAULT_FLAG_ACCESS_LEVEL,
  minimum_access_level: 'none' as AccessLevel,
  maximum_access_level: 'manager' as AccessLevel,
};

const rank = (level: AccessLevel) => FLAG_ACCESS_LEVELS.indexOf(level);
export const atLeast = (level: AccessLevel, required: AccessLevel) => rank(level) >= rank(required);
const highest = (levels: AccessLevel[]) => levels.reduce((a, b) => (rank(b) > rank(a) ? b : a));

interface AccessControlRow {
  resource_id: string | null;
  access_level: AccessLevel;
  role_id: string | null;
  user_id: number | null;
}

/** An object of a resource kind, as access decisions need it: its id and its creator. */
export interface ResourceForAccess {
  id: number;
  created_by_id: number | null;
}

/**
 * The caller's access level per object of one resource kind, as PostHog's UserAccessControl
 * decides it: the creator manages what they created; otherwise the highest explicit control for
 * the user or one of their roles on the object; otherwise the project-wide rule for the resource
 * kind (a role's or the default), else "editor". `restrictedTo` (feature flags' legacy role
 * access) narrows an object that has listed roles to their members: others may only view it.
 */
export async function accessLevels(
  db: Sql,
  scope: { teamId: number; userId: number; resource: string },
  objects: readonly ResourceForAccess[],
  restrictedTo?: (ids: number[]) => Promise<{ object_id: number; role_id: string }[]>,
): Promise<Map<number, AccessLevel>> {
  const { teamId, userId, resource } = scope;
  const result = new Map<number, AccessLevel>();
  if (objects.length === 0) return result;
  const ids = objects.map((f) => f.id);
  const [roles, controls, roleAccess] = await Promise.all([
    db.query<{ role_id: string }>('SELECT role_id FROM role_memberships WHERE user_id = $1', [userId]),
    db.query<AccessControlRow>(
      `SELECT resource_id, access_level, role_id::text AS role_id, user_id FROM access_controls
        WHERE team_id = $1 AND resource = $3 AND (resource_id IS NULL OR resource_id = ANY($2::text[]))`,
      [teamId, ids.map(String), resource],
    ),
    restrictedTo ? restrictedTo(ids) : Promise.resolve([]),
  ]);
  const myRoles = new Set(roles.map((r) => r.role_id));
  const appliesToMe = (c: AccessControlRow) => (c.user_id !== null && c.user_id === userId) || (c.role_id !== null && myRoles.has(c.role_id));
  const isDefault = (c: AccessControlRow) => c.user_id === null && c.role_id === null;

  const projectWide = controls.filter((c) => c.resource_id === null);
  const projectSpecific = projectWide.filter(appliesToMe).map((c) => c.access_level);
  const projectDefault = projectWide.find(isDefault)?.access_level;
  const projectLevel = projectSpecific.length > 0 ? highest(projectSpecific) : (projectDefault ?? DEFAULT_FLAG_ACCESS_LEVEL);

  for (const object of objects) {
    if (object.created_by_id === userId) {
      result.set(object.id, 'manager');
      continue;
    }
    const onObject = controls.filter((c) => c.resource_id === String(object.id));
    const specific = onObject.filter(appliesToMe).map((c) => c.access_level);
    const objectDefault = onObject.find(isDefault)?.access_level;
    let level = specific.length > 0 ? highest(specific) : (objectDefault ?? projectLevel);
    const allowedRoles = roleAccess.filter((r) => r.object_id === object.id).map((r) => r.role_id);
    if (allowedRoles.length > 0 && !allowedRoles.some((r) => myRoles.has(r)) && atLeast(level, 'editor')) level = 'viewer';
    result.set(object.id, level);
  }
  return result;
}
