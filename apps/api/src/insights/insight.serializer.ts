import type { InsightRow } from '@sightline/insights';
import type { InsightRelations } from './insight-relations';

/** PostHog's InsightSerializer fields (posthog/api/insight.py); `result` comes from the caller. */
export function serializeInsights(rows: InsightRow[], { users, tiles }: InsightRelations, extra: (row: InsightRow) => Record<string, unknown> = () => ({})) {
  const user = (id: number | null) => (id === null ? null : (users.get(id) ?? null));
  return rows.map((row) => {
    const onDashboards = tiles.get(row.id) ?? [];
    return {
      id: row.id,
      short_id: row.short_id,
      name: row.name,
      derived_name: row.derived_name,
      filters: row.filters ?? {},
      query: row.query ?? null,
      order: row.order,
      deleted: row.deleted,
      dashboards: onDashboards.map((t) => t.dashboardId),
      dashboard_tiles: onDashboards.map((t) => ({ id: t.tileId, dashboard_id: t.dashboardId, deleted: false })),
      last_refresh: row.last_refresh ? new Date(row.last_refresh).toISOString() : null,
      cache_target_age: null,
      next_allowed_client_refresh: null,
      result: null,
      hasMore: null,
      columns: null,
      created_at: new Date(row.created_at).toISOString(),
      created_by: user(row.created_by_id),
      description: row.description,
      updated_at: new Date(row.updated_at).toISOString(),
      tags: row.tags ?? [],
      favorited: row.favorited,
      last_modified_at: new Date(row.last_modified_at).toISOString(),
      last_modified_by: user(row.last_modified_by_id),
      is_sample: false,
      effective_restriction_level: 21,
      effective_privilege_level: 37,
      user_access_level: 'editor',
      timezone: null,
      is_cached: false,
      query_status: null,
      hogql: null,
      types: null,
      saved: row.saved,
      ...extra(row),
    };
  });
}

/** PostHog's InsightBasicSerializer: what my_last_viewed lists. */
export function serializeBasicInsights(rows: InsightRow[], relations: InsightRelations) {
  const full = serializeInsights(rows, relations);
  return full.map((i) => ({
    id: i.id,
    short_id: i.short_id,
    name: i.name,
    derived_name: i.derived_name,
    filters: i.filters,
    query: i.query,
    dashboards: i.dashboards,
    dashboard_tiles: i.dashboard_tiles,
    description: i.description,
    last_refresh: i.last_refresh,
    refreshing: false,
    saved: i.saved,
    tags: i.tags,
    updated_at: i.updated_at,
    created_by: i.created_by,
    created_at: i.created_at,
    last_modified_at: i.last_modified_at,
    favorited: i.favorited,
    user_access_level: i.user_access_level,
  }));
}
