import { randomBytes } from 'node:crypto';
import type { Sql } from '@sightline/postgres';

/** An `insights` row. */
export interface InsightRow {
  id: number;
  short_id: string;
  team_id: number;
  name: string | null;
  derived_name: string | null;
  description: string;
  filters: Record<string, unknown>;
  query: unknown;
  saved: boolean;
  deleted: boolean;
  tags: string[];
  favorited: boolean;
  order: number | null;
  created_by_id: number | null;
  created_at: Date;
  updated_at: Date;
  last_modified_at: Date;
  last_modified_by_id: number | null;
  last_refresh: Date | null;
}

export interface InsightInput {
  name?: string | null;
  derived_name?: string | null;
  description?: string;
  filters?: Record<string, unknown>;
  query?: unknown;
  saved?: boolean;
  deleted?: boolean;
  tags?: string[];
  favorited?: boolean;
  order?: number | null;
}

/** PostHog's short ids: 8 characters of letters and digits. */
export function newShortId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return [...randomBytes(8)].map((b) => alphabet[b % alphabet.length]).join('');
}

export interface InsightListFilter {
  limit: number;
  offset: number;
  saved?: boolean;
  favorited?: boolean;
  createdBy?: number;
  search?: string;
  tags?: string[];
  shortId?: string;
}

export async function listInsights(db: Sql, teamId: number, f: InsightListFilter): Promise<{ count: number; rows: InsightRow[] }> {
  const search = f.search ? `%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const where = `team_id = $1 AND NOT deleted
    AND ($2::boolean IS NULL OR saved = $2) AND ($3::boolean IS NULL OR favorited = $3) AND ($4::int IS NULL OR created_by_id = $4)
    AND ($5::text IS NULL OR name ILIKE $5 OR derived_name ILIKE $5 OR description ILIKE $5)
    AND ($6::text[] IS NULL OR tags && $6) AND ($7::text IS NULL OR short_id = $7)`;
  const args = [teamId, f.saved ?? null, f.favorited ?? null, f.createdBy ?? null, search, f.tags ?? null, f.shortId ?? null];
  const [rows, total] = await Promise.all([
    db.query<InsightRow>(`SELECT * FROM insights WHERE ${where} ORDER BY last_modified_at DESC, id DESC LIMIT $8 OFFSET $9`, [...args, f.limit, f.offset]),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM insights WHERE ${where}`, args),
  ]);
  return { count: Number(total[0]!.n), rows };
}

export async function findInsight(db: Sql, teamId: number, id: number): Promise<InsightRow | null> {
  const rows = await db.query<InsightRow>('SELECT * FROM insights WHERE team_id = $1 AND id = $2', [teamId, id]);
  return rows[0] ?? null;
}

/**
 * A new insight by `userId`, who is also its last editor unless `lastModifiedById` says otherwise
 * (an insight a template creates has no editor yet, as in PostHog).
 */
export async function insertInsight(
  db: Sql,
  teamId: number,
  input: InsightInput,
  userId: number,
  options: { lastModifiedById?: number | null } = {},
): Promise<InsightRow> {
  const rows = await db.query<InsightRow>(
    `INSERT INTO insights (short_id, team_id, name, derived_name, description, filters, query, saved, tags, favorited, "order", created_by_id, last_modified_by_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
    [
      newShortId(),
      teamId,
      input.name ?? null,
      input.derived_name ?? null,
      input.description ?? '',
      JSON.stringify(input.filters ?? {}),
      input.query === undefined || input.query === null ? null : JSON.stringify(input.query),
      input.saved ?? false,
      input.tags ?? [],
      input.favorited ?? false,
      input.order ?? null,
      userId,
      options.lastModifiedById === undefined ? userId : options.lastModifiedById,
    ],
  );
  return rows[0]!;
}

export async function updateInsight(db: Sql, teamId: number, id: number, input: InsightInput, userId: number): Promise<InsightRow | null> {
  const set = (key: keyof InsightInput) => input[key] !== undefined;
  const rows = await db.query<InsightRow>(
    `UPDATE insights SET
       name = CASE WHEN $3 THEN $4 ELSE name END,
       derived_name = CASE WHEN $5 THEN $6 ELSE derived_name END,
       description = COALESCE($7, description),
       filters = COALESCE($8::jsonb, filters),
       query = CASE WHEN $9 THEN $10::jsonb ELSE query END,
       saved = COALESCE($11, saved),
       deleted = COALESCE($12, deleted),
       tags = COALESCE($13, tags),
       favorited = COALESCE($14, favorited),
       "order" = CASE WHEN $15 THEN $16 ELSE "order" END,
       last_modified_at = now(), last_modified_by_id = $17, updated_at = now()
     WHERE team_id = $1 AND id = $2 RETURNING *`,
    [
      teamId,
      id,
      set('name'),
      input.name ?? null,
      set('derived_name'),
      input.derived_name ?? null,
      input.description ?? null,
      input.filters ? JSON.stringify(input.filters) : null,
      set('query'),
      input.query === undefined || input.query === null ? null : JSON.stringify(input.query),
      input.saved ?? null,
      input.deleted ?? null,
      input.tags ?? null,
      input.favorited ?? null,
      set('order'),
      input.order ?? null,
      userId,
    ],
  );
  return rows[0] ?? null;
}

export async function setInsightRefreshed(db: Sql, id: number, at: Date): Promise<void> {
  await db.query('UPDATE insights SET last_refresh = $2 WHERE id = $1', [id, at]);
}

/** The dashboards each insight is on (its tiles), by insight id. */
export async function dashboardsOfInsights(db: Sql, ids: number[]): Promise<Map<number, { tileId: number; dashboardId: number }[]>> {
  const rows = await db.query<{ insight_id: number; id: number; dashboard_id: number }>(
    'SELECT t.insight_id, t.id, t.dashboard_id FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id WHERE t.insight_id = ANY($1::int[]) AND NOT d.deleted ORDER BY t.id',
    [ids],
  );
  const out = new Map<number, { tileId: number; dashboardId: number }[]>();
  for (const r of rows) out.set(r.insight_id, [...(out.get(r.insight_id) ?? []), { tileId: r.id, dashboardId: r.dashboard_id }]);
  return out;
}

/** Makes the insight's tiles exactly the given dashboards of the project (the deprecated `dashboards` field). */
export async function setInsightDashboards(db: Sql, teamId: number, insightId: number, dashboardIds: number[]): Promise<void> {
  await db.query('DELETE FROM dashboard_tiles WHERE insight_id = $1 AND NOT (dashboard_id = ANY($2::int[]))', [insightId, dashboardIds]);
  await db.query(
    `INSERT INTO dashboard_tiles (dashboard_id, insight_id) SELECT d.id, $2 FROM dashboards d WHERE d.team_id = $1 AND d.id = ANY($3::int[]) AND NOT d.deleted
     ON CONFLICT (dashboard_id, insight_id) DO NOTHING`,
    [teamId, insightId, dashboardIds],
  );
}

/** Live dashboards of the project among `ids` (to refuse the others by id). */
export async function existingDashboardIds(db: Sql, teamId: number, ids: number[]): Promise<Set<number>> {
  const rows = await db.query<{ id: number }>('SELECT id FROM dashboards WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted', [teamId, ids]);
  return new Set(rows.map((r) => r.id));
}

export async function recordInsightView(db: Sql, teamId: number, userId: number, insightId: number, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO insight_views (team_id, user_id, insight_id, last_viewed_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (team_id, user_id, insight_id) DO UPDATE SET last_viewed_at = EXCLUDED.last_viewed_at`,
    [teamId, userId, insightId, at],
  );
}

/** The user's most recently viewed live insights, most recent first. */
export async function lastViewedInsights(db: Sql, teamId: number, userId: number, limit: number): Promise<InsightRow[]> {
  return db.query<InsightRow>(
    `SELECT i.* FROM insight_views v JOIN insights i ON i.id = v.insight_id
      WHERE v.team_id = $1 AND v.user_id = $2 AND NOT i.deleted ORDER BY v.last_viewed_at DESC, i.id DESC LIMIT $3`,
    [teamId, userId, limit],
  );
}
