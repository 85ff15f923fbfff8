import type { Sql } from '@sightline/postgres';
import { INT4_MAX } from '../http/drf-fields';
import type { FlagInput, FlagRef } from './flag-input';

export interface FlagRow {
  id: number;
  team_id: number;
  key: string;
  name: string;
  filters: Record<string, unknown>;
  active: boolean;
  deleted: boolean;
  ensure_experience_continuity: boolean;
  rollback_conditions: unknown;
  performed_rollback: boolean;
  tags: string[];
  creation_context: string;
  evaluation_runtime: string;
  version: number;
  created_by_id: number | null;
  last_modified_by_id: number | null;
  usage_dashboard_id: number | null;
  has_enriched_analytics: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface FlagListFilters {
  active?: string;
  created_by_id?: string;
  search?: string;
  type?: string;
  evaluation_runtime?: string;
  excluded_properties?: string[];
  /** Flags carrying any of these tags. */
  tags?: string[];
  /** Flags the caller may not see (access level "none"). */
  hidden_ids?: number[];
  /** A column, `-` first for descending; PostHog's default is -created_at. */
  order?: string;
}

/** Columns the list may be ordered by (PostHog accepts any model field). */
const ORDERABLE = new Set(['id', 'key', 'name', 'created_at', 'updated_at', 'active', 'version', 'created_by_id', 'evaluation_runtime']);

function orderBy(order: string | undefined): string {
  const column = order?.replace(/^-/, '');
  if (!order || !column || !ORDERABLE.has(column)) return 'f.created_at DESC, f.id DESC';
  const direction = order.startsWith('-') ? 'DESC' : 'ASC';
  return `f.${column} ${direction}, f.id ${direction}`;
}

/** Stale by configuration (PostHog's list filter when last_called_at is unknown): fully rolled out. */
const FULLY_ROLLED_OUT_SQL = `(
  (EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(f.filters->'groups') = 'array' THEN f.filters->'groups' ELSE '[]' END) g
            WHERE g->>'rollout_percentage' = '100' AND coalesce(g->'properties', '[]') = '[]')
   AND coalesce(jsonb_array_length(CASE WHEN jsonb_typeof(f.filters->'multivariate'->'variants') = 'array' THEN f.filters->'multivariate'->'variants' END), 0) = 0)
  OR (EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(f.filters->'multivariate'->'variants') = 'array' THEN f.filters->'multivariate'->'variants' ELSE '[]' END) v
               WHERE v->>'rollout_percentage' = '100')
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(f.filters->'groups') = 'array' THEN f.filters->'groups' ELSE '[]' END) g
                   WHERE g->>'rollout_percentage' = '100' AND coalesce(g->'properties', '[]') = '[]'))
  OR (EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(f.filters->'groups') = 'array' THEN f.filters->'groups' ELSE '[]' END) g
               WHERE g->>'rollout_percentage' = '100' AND coalesce(g->'properties', '[]') = '[]'
                 AND g->'variant' IS NOT NULL AND g->'variant' <> 'null')
      AND coalesce(jsonb_array_length(CASE WHEN jsonb_typeof(f.filters->'multivariate'->'variants') = 'array' THEN f.filters->'multivariate'->'variants' END), 0) > 0)
  OR f.filters = '{}'::jsonb
)`;

const HAS_VARIANTS_SQL = `coalesce(jsonb_array_length(CASE WHEN jsonb_typeof(f.filters->'multivariate'->'variants') = 'array' THEN f.filters->'multivariate'->'variants' END), 0) > 0`;

/** The list's WHERE clause: the project's non-deleted flags narrowed by PostHog's list filters. */
function listWhere(teamId: number, filters: FlagListFilters, nowMs: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [teamId];
  const clauses = ['f.team_id = $1', 'NOT f.deleted'];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filters.active === 'STALE') {
    clauses.push(`f.active AND f.created_at < ${param(new Date(nowMs - 30 * 86_400_000))} AND ${FULLY_ROLLED_OUT_SQL}`);
  } else if (filters.active !== undefined) {
    clauses.push(`f.active = ${param(filters.active === 'true')}`);
  }
  if (filters.created_by_id !== undefined) {
    // A non-numeric id matches nothing (Django would answer 400 for a bad integer lookup; nothing is safer than everything).
    // An id past the column's range names no user: no flag matches, as with any unknown id.
    const id = /^\d{1,10}$/.test(filters.created_by_id) ? Number(filters.created_by_id) : null;
    clauses.push(id !== null && id <= INT4_MAX ? `f.created_by_id = ${param(id)}` : 'false');
  }
  if (filters.search) {
    const pattern = param(`%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    clauses.push(
      `(f.key ILIKE ${pattern} OR f.name ILIKE ${pattern}
        OR EXISTS (SELECT 1 FROM experiments e WHERE e.feature_flag_id = f.id AND NOT e.deleted AND e.name ILIKE ${pattern}))`,
    );
  }
  if (filters.type === 'boolean') clauses.push(`NOT ${HAS_VARIANTS_SQL}`);
  else if (filters.type === 'multivariant') clauses.push(HAS_VARIANTS_SQL);
  else if (filters.type === 'experiment') clauses.push('EXISTS (SELECT 1 FROM experiments e WHERE e.feature_flag_id = f.id)');
  else if (filters.type === 'remote_config') clauses.push('false'); // Sightline has no remote-config flags
  if (filters.evaluation_runtime !== undefined) clauses.push(`f.evaluation_runtime = ${param(filters.evaluation_runtime)}`);
  if (filters.excluded_properties && filters.excluded_properties.length > 0) clauses.push(`NOT (f.key = ANY(${param(filters.excluded_properties)}::text[]))`);
  if (filters.tags && filters.tags.length > 0) clauses.push(`f.tags && ${param(filters.tags)}::text[]`);
  if (filters.hidden_ids && filters.hidden_ids.length > 0) clauses.push(`NOT (f.id = ANY(${param(filters.hidden_ids)}::int[]))`);
  return { sql: clauses.join(' AND '), params };
}

export async function listFlags(db: Sql, teamId: number, filters: FlagListFilters, page: { limit: number; offset: number }, nowMs: number) {
  const where = listWhere(teamId, filters, nowMs);
  const n = where.params.length;
  const [rows, count] = await Promise.all([
    db.query<FlagRow>(`SELECT f.* FROM feature_flags f WHERE ${where.sql} ORDER BY ${orderBy(filters.order)} LIMIT $${n + 1} OFFSET $${n + 2}`, [
      ...where.params,
      page.limit,
      page.offset,
    ]),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM feature_flags f WHERE ${where.sql}`, where.params),
  ]);
  return { rows, count: Number(count[0]?.n ?? 0) };
}

/** A flag of the project, deleted or not (PostHog retrieves soft-deleted flags by id). */
export async function findFlag(db: Sql, teamId: number, id: number, options: { forUpdate?: boolean } = {}): Promise<FlagRow | null> {
  const rows = await db.query<FlagRow>(`SELECT * FROM feature_flags WHERE team_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`, [teamId, id]);
  return rows[0] ?? null;
}

export async function findLiveFlagRef(db: Sql, teamId: number, idOrKey: number | string): Promise<FlagRef | null> {
  const column = typeof idOrKey === 'number' ? 'id' : 'key';
  const rows = await db.query<FlagRef>(`SELECT id, key, active, filters FROM feature_flags WHERE team_id = $1 AND ${column} = $2 AND NOT deleted`, [
    teamId,
    idOrKey,
  ]);
  return rows[0] ?? null;
}

export async function isKeyTaken(db: Sql, teamId: number, key: string, exceptFlagId?: number): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM feature_flags WHERE team_id = $1 AND key = $2 AND NOT deleted AND id <> $3', [teamId, key, exceptFlagId ?? -1]);
  return rows.length > 0;
}

/** Stored columns a FlagInput may set. */
export const WRITABLE_COLUMNS = [
  'name',
  'key',
  'filters',
  'deleted',
  'active',
  'ensure_experience_continuity',
  'rollback_conditions',
  'performed_rollback',
  'tags',
  'has_enriched_analytics',
  'creation_context',
  'evaluation_runtime',
] as const;

const columnValue = (column: (typeof WRITABLE_COLUMNS)[number], value: unknown) =>
  column === 'filters' || column === 'rollback_conditions' ? (value === undefined ? null : JSON.stringify(value)) : value;

export async function insertFlag(db: Sql, teamId: number, userId: number, input: FlagInput, now: Date): Promise<FlagRow> {
  const columns = WRITABLE_COLUMNS.filter((c) => input[c] !== undefined);
  const values = columns.map((c) => columnValue(c, input[c]));
  const placeholders = columns.map((_, i) => `$${i + 5}`);
  const rows = await db.query<FlagRow>(
    `INSERT INTO feature_flags (team_id, created_by_id, last_modified_by_id, created_at, updated_at, version${columns.map((c) => `, ${c}`).join('')})
     VALUES ($1, $2, $3, $4, $4, 1${placeholders.map((p) => `, ${p}`).join('')}) RETURNING *`,
    [teamId, userId, userId, now, ...values],
  );
  return rows[0]!;
}

export async function updateFlag(db: Sql, flag: FlagRow, userId: number, input: FlagInput, now: Date): Promise<FlagRow> {
  const columns = WRITABLE_COLUMNS.filter((c) => input[c] !== undefined);
  const sets = columns.map((c, i) => `${c} = $${i + 5}`);
  const rows = await db.query<FlagRow>(
    `UPDATE feature_flags SET version = $2, last_modified_by_id = $3, updated_at = $4${sets.map((s) => `, ${s}`).join('')}
      WHERE id = $1 RETURNING *`,
    [flag.id, flag.version + 1, userId, now, ...columns.map((c) => columnValue(c, input[c]))],
  );
  return rows[0]!;
}

export async function setAnalyticsDashboards(db: Sql, flagId: number, dashboardIds: number[]): Promise<void> {
  if (dashboardIds.length === 0) return;
  await db.query(`INSERT INTO feature_flag_dashboards (feature_flag_id, dashboard_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`, [
    flagId,
    dashboardIds,
  ]);
}

export async function setHasEnrichedAnalytics(db: Sql, flagId: number): Promise<void> {
  await db.query('UPDATE feature_flags SET has_enriched_analytics = true WHERE id = $1', [flagId]);
}

export async function setUsageDashboard(db: Sql, flagId: number, dashboardId: number): Promise<void> {
  await db.query('UPDATE feature_flags SET usage_dashboard_id = $2 WHERE id = $1', [flagId, dashboardId]);
}

/** Active flags whose conditions depend on `flag` (PostHog's find_dependent_flags). */
export async function dependentFlags(db: Sql, flag: Pick<FlagRow, 'id' | 'team_id'>): Promise<{ id: number; key: string }[]> {
  return db.query<{ id: number; key: string }>(
    `SELECT id, key FROM feature_flags f
      WHERE team_id = $1 AND NOT deleted AND active AND id <> $2
        AND EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(f.filters->'groups') = 'array' THEN f.filters->'groups' ELSE '[]' END) g
                     CROSS JOIN jsonb_array_elements(CASE WHEN jsonb_typeof(g->'properties') = 'array' THEN g->'properties' ELSE '[]' END) p
                     WHERE p->>'type' = 'flag' AND p->>'key' = $3)
      ORDER BY key`,
    [flag.team_id, flag.id, String(flag.id)],
  );
}

/**
 * Active flags whose conditions (or super conditions) name any of `cohortIds`, as PostHog
 * checks before a cohort is deleted.
 */
export async function activeFlagsNamingCohorts(db: Sql, teamId: number, cohortIds: readonly number[]): Promise<{ key: string; name: string }[]> {
  return db.query<{ key: string; name: string }>(
    `SELECT key, name FROM feature_flags f
      WHERE team_id = $1 AND NOT deleted AND active
        AND EXISTS (SELECT 1 FROM (VALUES ('groups'), ('super_groups')) AS lists (name)
                     CROSS JOIN jsonb_array_elements(CASE WHEN jsonb_typeof(f.filters->lists.name) = 'array' THEN f.filters->lists.name ELSE '[]' END) g
                     CROSS JOIN jsonb_array_elements(CASE WHEN jsonb_typeof(g->'properties') = 'array' THEN g->'properties' ELSE '[]' END) p
                     WHERE p->>'type' = 'cohort' AND p->>'value' = ANY($2::text[]))
      ORDER BY key`,
    [teamId, cohortIds.map(String)],
  );
}

/** The dashboards a flag is linked to (analytics_dashboards), in id order. */
export async function flagDashboardIds(db: Sql, flagId: number): Promise<number[]> {
  const rows = await db.query<{ dashboard_id: number }>('SELECT dashboard_id FROM feature_flag_dashboards WHERE feature_flag_id = $1 ORDER BY dashboard_id', [
    flagId,
  ]);
  return rows.map((r) => r.dashboard_id);
}

/** Ids of the flag's experiments that are not deleted. */
export async function activeExperimentIds(db: Sql, flagId: number): Promise<number[]> {
  return (await db.query<{ id: number }>('SELECT id FROM experiments WHERE feature_flag_id = $1 AND NOT deleted ORDER BY id', [flagId])).map((e) => e.id);
}

export async function hasDeletedExperiment(db: Sql, flagId: number): Promise<boolean> {
  return (await db.query('SELECT 1 FROM experiments WHERE feature_flag_id = $1 AND deleted LIMIT 1', [flagId])).length > 0;
}

/** The live but inactive flags among `ids`, by key. */
export async function disabledFlagsAmong(db: Sql, teamId: number, ids: readonly number[]): Promise<{ id: number; key: string }[]> {
  return db.query<{ id: number; key: string }>(
    'SELECT id, key FROM feature_flags WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted AND NOT active ORDER BY key',
    [teamId, ids],
  );
}

/** Every live flag of the project with its creator, for access checks. */
/** Every flag of the project, deleted ones included (their activity stays readable). */
export async function listFlagOwners(db: Sql, teamId: number): Promise<{ id: number; created_by_id: number | null }[]> {
  return db.query<{ id: number; created_by_id: number | null }>('SELECT id, created_by_id FROM feature_flags WHERE team_id = $1', [teamId]);
}
