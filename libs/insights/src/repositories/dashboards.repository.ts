import type { Sql } from '@sightline/postgres';

/** A `dashboards` row. */
export interface DashboardRow {
  id: number;
  team_id: number;
  name: string;
  description: string;
  creation_mode: string;
  deleted: boolean;
  pinned: boolean;
  tags: string[];
  created_by_id: number | null;
  created_at: Date;
}

export interface DashboardInput {
  name?: string;
  description?: string;
  pinned?: boolean;
  tags?: string[];
  deleted?: boolean;
}

export async function listDashboards(db: Sql, teamId: number, page: { limit: number; offset: number }): Promise<{ count: number; rows: DashboardRow[] }> {
  const [rows, total] = await Promise.all([
    db.query<DashboardRow>('SELECT * FROM dashboards WHERE team_id = $1 AND NOT deleted ORDER BY pinned DESC, name, id LIMIT $2 OFFSET $3', [
      teamId,
      page.limit,
      page.offset,
    ]),
    db.query<{ n: string }>('SELECT count(*) AS n FROM dashboards WHERE team_id = $1 AND NOT deleted', [teamId]),
  ]);
  return { count: Number(total[0]!.n), rows };
}

export async function findDashboard(db: Sql, teamId: number, id: number): Promise<DashboardRow | null> {
  const rows = await db.query<DashboardRow>('SELECT * FROM dashboards WHERE team_id = $1 AND id = $2', [teamId, id]);
  return rows[0] ?? null;
}

export async function insertDashboard(db: Sql, teamId: number, input: DashboardInput, userId: number): Promise<DashboardRow> {
  const rows = await db.query<DashboardRow>(
    'INSERT INTO dashboards (team_id, name, description, pinned, tags, created_by_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
    [teamId, input.name ?? '', input.description ?? '', input.pinned ?? false, input.tags ?? [], userId],
  );
  return rows[0]!;
}

export async function updateDashboard(db: Sql, teamId: number, id: number, input: DashboardInput): Promise<DashboardRow | null> {
  const rows = await db.query<DashboardRow>(
    `UPDATE dashboards SET name = COALESCE($3, name), description = COALESCE($4, description), pinned = COALESCE($5, pinned),
       tags = COALESCE($6, tags), deleted = COALESCE($7, deleted) WHERE team_id = $1 AND id = $2 RETURNING *`,
    [teamId, id, input.name ?? null, input.description ?? null, input.pinned ?? null, input.tags ?? null, input.deleted ?? null],
  );
  return rows[0] ?? null;
}

/** The live insights on a dashboard, with their tile ids, in tile order. */
export async function dashboardTiles(db: Sql, dashboardId: number): Promise<{ tile_id: number; insight_id: number; layouts: unknown; color: string | null }[]> {
  return db.query(
    `SELECT t.id AS tile_id, t.insight_id, t.layouts, t.color FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id
      WHERE t.dashboard_id = $1 AND NOT i.deleted ORDER BY t.id`,
    [dashboardId],
  );
}
