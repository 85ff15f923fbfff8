// A saved insight as the insights endpoint answers it, and the name the app shows for it.

export interface Insight {
  id: number;
  short_id: string;
  name: string | null;
  derived_name: string | null;
  description?: string | null;
  filters: Record<string, unknown>;
  /** The query node, when the insight is saved as one (a SQL insight: a DataVisualizationNode around a HogQLQuery). */
  query?: unknown;
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

/** The SQL page's address for a SQL insight (a DataVisualizationNode or DataTableNode around a HogQLQuery), else null. */
export function sqlPathOf(insight: Pick<Insight, 'query'>): string | null {
  const node = insight.query as { kind?: unknown; source?: { kind?: unknown; query?: unknown } } | null | undefined;
  const isTable = node?.kind === 'DataVisualizationNode' || node?.kind === 'DataTableNode';
  return isTable && node.source?.kind === 'HogQLQuery' && typeof node.source.query === 'string' ? `/sql?q=${encodeURIComponent(node.source.query)}` : null;
}
