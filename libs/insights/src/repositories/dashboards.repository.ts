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
  /** How the dashboard came to be: `default`, or `template` for one the product generates. */
  creation_mode?: 'default' | 'template';
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
    'INSERT INTO dashboards (team_id, name, description, pinned, tags, created_by_id, creation_mode) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *',
    [teamId, input.name ?? '', input.description ?? '', input.pinned ?? false, input.tags ?? [], userId, input.creation_mode ?? 'default'],
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

/** How many tiles the dashboard has, deleted insights' included. */
export async function countDashboardTiles(db: Sql, dashboardId: number): Promise<number> {
  const rows = await db.query<{ n: string }>('SELECT count(*) AS n FROM dashboard_tiles WHERE dashboard_id = $1', [dashboardId]);
  return Number(rows[0]!.n);
}

/** Puts the insight on the dashboard at the given layouts. */
export async function addDashboardTile(db: Sql, dashboardId: number, insightId: number, layouts: Record<string, unknown>): Promise<void> {
  await db.query('INSERT INTO dashboard_tiles (dashboard_id, insight_id, layouts) VALUES ($1, $2, $3)', [dashboardId, insightId, JSON.stringify(layouts)]);
}

/** Whether a live insight named one of `names` is on the dashboard. */
export async function dashboardHasInsightNamed(db: Sql, dashboardId: number, names: readonly string[]): Promise<boolean> {
  const rows = await db.query(
    'SELECT 1 FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id WHERE t.dashboard_id = $1 AND i.name = ANY($2::text[]) AND NOT i.deleted',
    [dashboardId, names],
  );
  return rows.length > 0;
}
