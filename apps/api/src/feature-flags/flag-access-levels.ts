import type { Sql } from '@sightline/postgres';
import { accessLevels, type AccessLevel, type ResourceForAccess } from '../access-control';
import { listFlagOwners } from './feature-flags.repository';
import { rolesWithAccess } from './flag-role-access.repository';

/** The caller's level per feature flag, narrowed by the flags' legacy role access. */
export function flagAccessLevels(db: Sql, teamId: number, userId: number, flags: readonly ResourceForAccess[]): Promise<Map<number, AccessLevel>> {
  return accessLevels(db, { teamId, userId, resource: 'feature_flag' }, flags, (ids) => rolesWithAccess(db, ids));
}

/**
 * The project's flags the user has no access to (level "none"). Every read of flags leaves them
 * out: the list (as PostHog does), and the status, activity and local evaluation answers.
 */
export async function hiddenFlagIds(db: Sql, teamId: number, userId: number): Promise<number[]> {
  const flags = await listFlagOwners(db, teamId);
  const levels = await flagAccessLevels(db, teamId, userId, flags);
  return flags.filter((flag) => levels.get(flag.id) === 'none').map((flag) => flag.id);
}
