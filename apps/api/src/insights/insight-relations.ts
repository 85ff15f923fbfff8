import { loadBasicUsers } from '@sightline/accounts';
import { dashboardsOfInsights, type InsightRow } from '@sightline/insights';
import type { Sql } from '@sightline/postgres';

/** What an insight's answer names besides its own row: its users and its dashboard tiles. */
export interface InsightRelations {
  users: Awaited<ReturnType<typeof loadBasicUsers>>;
  tiles: Map<number, { tileId: number; dashboardId: number }[]>;
}

export async function loadInsightRelations(db: Sql, rows: InsightRow[]): Promise<InsightRelations> {
  const [users, tiles] = await Promise.all([
    loadBasicUsers(
      db,
      rows.flatMap((r) => [r.created_by_id, r.last_modified_by_id]),
    ),
    dashboardsOfInsights(
      db,
      rows.map((r) => r.id),
    ),
  ]);
  return { users, tiles };
}
