import { ApiError } from '@sightline/http';
import type { InsightRow, QueryProjectRow } from '@sightline/insights';

/** How many of a dashboard's tiles one read computes; the rest answer their stored state (docs/http-api.md#limits). */
export const MAX_COMPUTED_TILES = 50;
/** How many tiles of one read run at once: a dashboard is never more than this many queries in flight. */
export const TILE_CONCURRENCY = 3;

/** A tile's computed answer (the saved-insight path: the one cache, `refresh` recomputes). */
export interface TileAnswer {
  result: unknown;
  is_cached: boolean;
  last_refresh: string | null;
  timezone: string;
}

/** The fields a tile's insight answers besides the stored ones, or the error its query gave. */
export type TileOutcome = { answer: TileAnswer } | { error: { code: string; detail: string } };

/**
 * How a retrieve answers each tile, from its `refresh` parameter in PostHog's words
 * (posthog/hogql_queries/query_runner.py, execution_mode_from_refresh): `force_cache` answers
 * only what the cache holds and computes nothing (a tile not in it has a null `result`), so the
 * dashboard can be drawn at once and its tiles computed one by one; `true` (or `force_blocking`)
 * computes every tile again. Anything else, or none, computes through the cache, as Sightline's
 * retrieve always has (PostHog's default is cache-only).
 */
export type TileRefresh = 'cache_only' | 'compute' | 'recompute';

export function tileRefresh(value: unknown): TileRefresh {
  if (value === 'force_cache') return 'cache_only';
  if (value === true || value === 'true' || value === '1' || value === 'force_blocking') return 'recompute';
  return 'compute';
}

export type ComputeInsight = (project: QueryProjectRow, row: InsightRow, refresh: TileRefresh) => Promise<TileAnswer>;

/**
 * Each tile's insight computed as its own page computes it (PostHog's dashboard retrieve answers
 * every tile's `result`), at most MAX_COMPUTED_TILES of them, TILE_CONCURRENCY at a time, each
 * query under the query service's own limits. A tile whose query is refused (a 4xx) carries that
 * error and the dashboard still answers.
 */
export async function computeTiles(
  compute: ComputeInsight,
  project: QueryProjectRow,
  rows: InsightRow[],
  refresh: TileRefresh,
): Promise<Map<number, TileOutcome>> {
  const outcomes = new Map<number, TileOutcome>();
  const queue = rows.slice(0, MAX_COMPUTED_TILES);
  let next = 0;
  const worker = async () => {
    while (next < queue.length) {
      const row = queue[next++]!;
      try {
        outcomes.set(row.id, { answer: await compute(project, row, refresh) });
      } catch (error) {
        // The query's own 4xx (a filter ClickHouse refuses, an answer too large) stays on its tile;
        // anything else (ClickHouse down) is the dashboard's error.
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        outcomes.set(row.id, { error: { code: error.code, detail: error.detail } });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(TILE_CONCURRENCY, queue.length) }, worker));
  return outcomes;
}
