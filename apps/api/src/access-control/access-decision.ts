import type { Sql } from '@sightline/postgres';
import { roleIdsOfUser } from '../organization';
import { rulesFor, type AccessRule } from './access-controls.repository';
import { atLeast, DEFAULT_FLAG_ACCESS_LEVEL, highest, type AccessLevel } from './access-levels';

/** An object of a resource kind, as access decisions need it: its id and its creator. */
export interface ResourceForAccess {
  id: number;
  created_by_id: number | null;
}

/** What an access decision reads: the caller, their roles, the rules, and the roles objects are restricted to. */
export interface AccessFacts {
  userId: number;
  roleIds: readonly string[];
  rules: readonly AccessRule[];
  restrictedTo: readonly { object_id: number; role_id: string }[];
}

/**
 * The caller's access level per object of one resource kind, as PostHog's UserAccessControl
 * decides it: the creator manages what they created; otherwise the highest explicit control for
 * the user or one of their roles on the object; otherwise the project-wide rule for the resource
 * kind (a role's or the default), else "editor". `restrictedTo` (feature flags' legacy role
 * access) narrows an object that has listed roles to their members: others may only view it.
 */
export function decideAccessLevels(facts: AccessFacts, objects: readonly ResourceForAccess[]): Map<number, AccessLevel> {
  const { userId, rules, restrictedTo } = facts;
  const myRoles = new Set(facts.roleIds);
  const appliesToMe = (c: AccessRule) => (c.user_id !== null && c.user_id === userId) || (c.role_id !== null && myRoles.has(c.role_id));
  const isDefault = (c: AccessRule) => c.user_id === null && c.role_id === null;

  const projectWide = rules.filter((c) => c.resource_id === null);
  const projectSpecific = projectWide.filter(appliesToMe).map((c) => c.access_level);
  const projectDefault = projectWide.find(isDefault)?.access_level;
  const projectLevel = projectSpecific.length > 0 ? highest(projectSpecific) : (projectDefault ?? DEFAULT_FLAG_ACCESS_LEVEL);

  const result = new Map<number, AccessLevel>();
  for (const object of objects) {
    if (object.created_by_id === userId) {
      result.set(object.id, 'manager');
      continue;
    }
    const onObject = rules.filter((c) => c.resource_id === String(object.id));
    const specific = onObject.filter(appliesToMe).map((c) => c.access_level);
    const objectDefault = onObject.find(isDefault)?.access_level;
    let level = specific.length > 0 ? highest(specific) : (objectDefault ?? projectLevel);
    const allowedRoles = restrictedTo.filter((r) => r.object_id === object.id).map((r) => r.role_id);
    if (allowedRoles.length > 0 && !allowedRoles.some((r) => myRoles.has(r)) && atLeast(level, 'editor')) level = 'viewer';
    result.set(object.id, level);
  }
  return result;
}

/** Loads what decideAccessLevels reads for `objects` and decides. */
export async function accessLevels(
  db: Sql,
  scope: { teamId: number; userId: number; resource: string },
  objects: readonly ResourceForAccess[],
  restrictedTo?: (ids: number[]) => Promise<{ object_id: number; role_id: string }[]>,
): Promise<Map<number, AccessLevel>> {
  const { teamId, userId, resource } = scope;
  if (objects.length === 0) return new Map();
  const ids = objects.map((f) => f.id);
  const [roleIds, rules, restricted] = await Promise.all([
    roleIdsOfUser(db, userId),
    rulesFor(db, teamId, resource, ids.map(String)),
    restrictedTo ? restrictedTo(ids) : Promise.resolve([]),
  ]);
  return decideAccessLevels({ userId, roleIds, rules, restrictedTo: restricted }, objects);
}
