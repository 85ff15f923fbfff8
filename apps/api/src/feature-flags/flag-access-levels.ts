import type { Sql } from '@sightline/postgres';
import { accessLevels, type AccessLevel, type ResourceForAccess } from '../access-control/access-levels';

/** The caller's level per feature flag, narrowed by the flags' legacy role access. */
export function flagAccessLevels(db: Sql, teamId: number, userId: number, flags: readonly ResourceForAccess[]): Promise<Map<number, AccessLevel>> {
  return accessLevels(db, { teamId, userId, resource: 'feature_flag' }, flags, (ids) =>
    db.query<{ object_id: number; role_id: string }>(
      'SELECT feature_flag_id AS object_id, role_id::text AS role_id FROM feature_flag_role_access WHERE feature_flag_id = ANY($1::int[])',
      [ids],
    ),
  );
}
