import { queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import type { QueryParams } from '@sightline/properties';

/** A membership condition on the `person` row `id`, with its parameters and the bound team parameter. */
export interface CohortMembership {
  params: QueryParams;
  team: string;
  members: string;
}

/** How many live persons of the project the membership condition holds. */
export async function countCohortMembers(ch: ClickHouseClient, teamId: number, { params, team, members }: CohortMembership): Promise<number> {
  const rows = await queryClickhouse<{ n: string }>(ch, {
    kind: 'cohorts.count',
    teamId,
    sql: `SELECT count() AS n FROM (SELECT id FROM person WHERE team_id = ${team} GROUP BY id HAVING argMax(is_deleted, version) = 0) WHERE ${members}`,
    params: params.values,
  });
  return Number(rows[0]?.n ?? 0);
}
