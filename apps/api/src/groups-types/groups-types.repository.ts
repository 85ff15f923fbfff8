import type { Sql } from '@sightline/postgres';

/** A project's group type as stored (the worker maps a type to an index on first sight). */
export interface GroupTypeRow {
  group_type_index: number;
  group_type: string;
  name_singular: string | null;
  name_plural: string | null;
  default_columns: string[] | null;
  created_at: Date | null;
}

const COLUMNS = 'group_type_index, group_type, name_singular, name_plural, default_columns, created_at';

/** The project's group types by index. */
export async function listGroupTypes(db: Sql, teamId: number): Promise<GroupTypeRow[]> {
  const rows = await db.query<GroupTypeRow>(`SELECT ${COLUMNS} FROM group_type_mappings WHERE team_id = $1 ORDER BY group_type_index`, [teamId]);
  return rows.map((row) => ({ ...row, group_type_index: Number(row.group_type_index) }));
}

export async function findGroupType(db: Sql, teamId: number, index: number): Promise<GroupTypeRow | null> {
  const [row] = await db.query<GroupTypeRow>(`SELECT ${COLUMNS} FROM group_type_mappings WHERE team_id = $1 AND group_type_index = $2`, [teamId, index]);
  return row ? { ...row, group_type_index: Number(row.group_type_index) } : null;
}

/** Sets the names given (a missing one is kept); false when the project has no such type. */
export async function updateGroupTypeNames(
  db: Sql,
  teamId: number,
  index: number,
  names: { name_singular?: string | null; name_plural?: string | null },
): Promise<boolean> {
  const rows = await db.query<{ group_type_index: number }>(
    `UPDATE group_type_mappings
        SET name_singular = CASE WHEN $3 THEN $4 ELSE name_singular END,
            name_plural = CASE WHEN $5 THEN $6 ELSE name_plural END
      WHERE team_id = $1 AND group_type_index = $2
      RETURNING group_type_index`,
    [teamId, index, 'name_singular' in names, names.name_singular ?? null, 'name_plural' in names, names.name_plural ?? null],
  );
  return rows.length > 0;
}

/** Sets the columns the type's groups list shows; false when the project has no such type. */
export async function updateGroupTypeDefaultColumns(db: Sql, teamId: number, index: number, columns: string[] | null): Promise<boolean> {
  const rows = await db.query<{ group_type_index: number }>(
    'UPDATE group_type_mappings SET default_columns = $3::jsonb WHERE team_id = $1 AND group_type_index = $2 RETURNING group_type_index',
    [teamId, index, columns === null ? null : JSON.stringify(columns)],
  );
  return rows.length > 0;
}
