// A saved insight as the insights endpoint answers it, and the name the app shows for it.

export interface Insight {
  id: number;
  short_id: string;
  name: string | null;
  derived_name: string | null;
  description?: string | null;
  filters: Record<string, unknown>;
  last_modified_at: string;
  dashboards?: number[];
  result?: unknown;
  /** A table insight's (DataTableNode, DataVisualizationNode) columns and their types, beside its rows in `result`. */
  columns?: unknown[] | null;
  types?: (string | [string, string])[] | null;
  /** When `result` was computed, and whether it came from the server's cache. */
  last_refresh?: string | null;
  is_cached?: boolean;
}

export const insightName = (insight: Pick<Insight, 'name' | 'derived_name' | 'short_id'>) =>
  insight.name || insight.derived_name || `Insight ${insight.short_id}`;
