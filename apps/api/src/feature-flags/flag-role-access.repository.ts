import type { Sql } from '@sightline/postgres';

/** A `feature_flag_role_access` row: one organisation role allowed to edit one flag. */
export interface RoleAccessRow {
  id: number;
  role_id: string;
  added_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, role_id::text AS role_id, added_at, updated_at';

export async function listRoleAccess(db: Sql, flagId: number, page: { limit: number; offset: number }): Promise<{ rows: RoleAccessRow[]; count: number }> {
  const [rows, count] = await Promise.all([
    db.query<RoleAccessRow>(`SELECT ${COLUMNS} FROM feature_flag_role_access WHERE feature_flag_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, [
      flagId,
      page.limit,
      page.offset,
    ]),
    db.query<{ n: string }>('SELECT count(*) AS n FROM feature_flag_role_access WHERE feature_flag_id = $1', [flagId]),
  ]);
  return { rows, count: Number(count[0]!.n) };
}

export async function findRoleAccess(db: Sql, flagId: number, id: number): Promise<RoleAccessRow | null> {
  const rows = await db.query<RoleAccessRow>(`SELECT ${COLUMNS} FROM feature_flag_role_access WHERE id = $1 AND feature_flag_id = $2`, [id, flagId]);
  return rows[0] ?? null;
}

/** The new entry, or null when the role already had access to the flag. */
export async function insertRoleAccess(db: Sql, flagId: number, roleId: string): Promise<RoleAccessRow | null> {
  const rows = await db.query<RoleAccessRow>(
    `INSERT INTO feature_flag_role_access (feature_flag_id, role_id) VALUES ($1, $2)
     ON CONFLICT (feature_flag_id, role_id) DO NOTHING RETURNING ${COLUMNS}`,
    [flagId, roleId],
  );
  return rows[0] ?? null;
}

/** Whether an entry was deleted. */
export async function deleteRoleAccess(db: Sql, flagId: number, id: number): Promise<boolean> {
  return (await db.query('DELETE FROM feature_flag_role_access WHERE id = $1 AND feature_flag_id = $2 RETURNING id', [id, flagId])).length > 0;
}

/** The roles listed on each of `flagIds` (flags without any are not in the answer). */
export async function rolesWithAccess(db: Sql, flagIds: readonly number[]): Promise<{ object_id: number; role_id: string }[]> {
  return db.query<{ object_id: number; role_id: string }>(
    'SELECT feature_flag_id AS object_id, role_id::text AS role_id FROM feature_flag_role_access WHERE feature_flag_id = ANY($1::int[])',
    [flagIds],
  );
}
