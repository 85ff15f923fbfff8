import { queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import type { Sql } from '@sightline/postgres';
import type { Properties } from './property-updates';

export interface StoredGroup {
  groupTypeIndex: number;
  groupKey: string;
  properties: Properties;
  version: number;
  createdAt: string;
}

export async function findGroup(sql: Sql, teamId: number, groupTypeIndex: number, groupKey: string): Promise<StoredGroup | null> {
  const rows = await sql.query<{ group_properties: Properties; version: string; created_at: Date | string }>(
    'SELECT group_properties, version, created_at FROM groups WHERE team_id = $1 AND group_type_index = $2 AND group_key = $3',
    [teamId, groupTypeIndex, groupKey],
  );
  const row = rows[0];
  if (!row) return null;
  return { groupTypeIndex, groupKey, properties: row.group_properties, version: Number(row.version), createdAt: new Date(row.created_at).toISOString() };
}

/** Group type → index for a project. */
export async function listGroupTypes(sql: Sql, teamId: number): Promise<Map<string, number>> {
  const rows = await sql.query<{ group_type: string; group_type_index: number }>(
    'SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1 ORDER BY group_type_index',
    [teamId],
  );
  return new Map(rows.map((r) => [r.group_type, Number(r.group_type_index)]));
}

/** The ClickHouse copy of a person as queries see it: the row with the highest version. */
export async function readPersonCopy(
  ch: ClickHouseClient,
  teamId: number,
  personUuid: string,
): Promise<{ properties: Properties; isIdentified: boolean; isDeleted: boolean; version: number } | null> {
  const rows = await queryClickhouse<{ properties: string; is_identified: number; is_deleted: number; latest_version: string }>(ch, {
    kind: 'persons.copy',
    teamId,
    sql: `SELECT argMax(properties, version) AS properties, argMax(is_identified, version) AS is_identified,
                     argMax(is_deleted, version) AS is_deleted, max(version) AS latest_version
                FROM person WHERE team_id = {team:Int64} AND id = {id:UUID} GROUP BY id`,
    params: { team: teamId, id: personUuid },
  });
  const row = rows[0];
  if (!row) return null;
  return {
    properties: JSON.parse(row.properties) as Properties,
    isIdentified: row.is_identified === 1,
    isDeleted: row.is_deleted === 1,
    version: Number(row.latest_version),
  };
}

/** The person a distinct id maps to in ClickHouse (latest version of person_distinct_id2). */
export async function readDistinctIdCopy(ch: ClickHouseClient, teamId: number, distinctId: string): Promise<{ personId: string; version: number } | null> {
  const rows = await queryClickhouse<{ person_id: string; latest_version: string }>(ch, {
    kind: 'persons.distinct_id_copy',
    teamId,
    sql: `SELECT toString(argMax(person_id, version)) AS person_id, max(version) AS latest_version
                FROM person_distinct_id2 WHERE team_id = {team:Int64} AND distinct_id = {d:String}
               GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`,
    params: { team: teamId, d: distinctId },
  });
  return rows[0] ? { personId: rows[0].person_id, version: Number(rows[0].latest_version) } : null;
}
