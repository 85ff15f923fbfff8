import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import {
  existingDashboardIds,
  insertInsight,
  insertInsightTiming,
  lastViewedInsights,
  listInsights,
  parseSavedInsightQuery,
  recordInsightView,
  savedInsightAnswer,
  setInsightDashboards,
  setInsightRefreshed,
  updateInsight,
  type InsightListFilter,
  type InsightRow,
  type QueryProjectRow,
  type QueryService,
} from '@sightline/insights';
import type { Metrics } from '@sightline/metrics';
import type { Sql } from '@sightline/postgres';
import { asValidationError } from '../http/insight-request';
import type { SavedInsightInput } from './insight-input';
import { loadInsightRelations, type InsightRelations } from './insight-relations';
import { parseInsightTiming } from './insight-timing';

export interface SavedInsightsDeps {
  db: Sql;
  ch: ClickHouseClient;
  now: () => number;
  metrics?: Metrics;
}

/** How many insights my_last_viewed lists (PostHog's). */
const LAST_VIEWED = 5;

/** What a read of a saved insight answers besides the row: its result (with a table query's columns), computed through the one cache. */
export type SavedInsightResult = {
  result: unknown;
  is_cached: boolean;
  last_refresh: string | null;
  timezone: string;
  columns?: unknown;
  types?: unknown;
  hasMore?: unknown;
  hogql?: unknown;
};

type Project = QueryProjectRow;
type Query = Pick<InsightRow, 'filters' | 'query'>;

/**
 * Saved insights' rules: a query is checked when written as every read will check it (it must
 * parse, and the actions and cohorts it names must exist in the project), dashboards named must
 * be the project's, and a read records the view and computes the answer through the one cache.
 */
export function createSavedInsightsService(deps: SavedInsightsDeps, queries: QueryService) {
  const { db } = deps;

  const checkDashboards = async (project: Project, ids: number[] | undefined) => {
    if (!ids) return;
    const known = await existingDashboardIds(db, project.id, ids);
    const missing = ids.findIndex((id) => !known.has(id));
    if (missing >= 0) throw errors.validation(`Invalid pk "${ids[missing]}" - object does not exist.`, `dashboards__${missing}`, 'does_not_exist');
  };

  /** Parsed as every read parses it, so a query no read could run is refused when saved, not on each read. */
  const parseQuery = (query: Query) => {
    try {
      return parseSavedInsightQuery(query);
    } catch (error) {
      throw asValidationError(error);
    }
  };

  const checkReferences = async (project: Project, query: Query) => {
    try {
      const parsed = parseSavedInsightQuery(query);
      if (parsed) await queries.checkReferences(project, parsed);
    } catch (error) {
      throw asValidationError(error);
    }
  };

  return {
    relationsOf: (rows: InsightRow[]): Promise<InsightRelations> => loadInsightRelations(db, rows),

    lastViewed: (project: Project, userId: number) => lastViewedInsights(db, project.id, userId, LAST_VIEWED),

    list: (project: Project, filter: InsightListFilter) => listInsights(db, project.id, filter),

    async recordTiming(project: Project, userId: number, body: unknown): Promise<void> {
      const row = parseInsightTiming(body, { teamId: project.id, userId, now: deps.now() });
      if (row.time_to_see_data_ms !== null)
        deps.metrics?.insightTimeToSeeData.observe(
          { type: row.type || 'unknown', context: row.context || 'unknown', status: row.status },
          row.time_to_see_data_ms / 1000,
        );
      await insertInsightTiming(deps.ch, row);
    },

    async create(project: Project, userId: number, input: SavedInsightInput): Promise<InsightRow> {
      const query = { filters: input.filters ?? {}, query: input.query ?? null };
      parseQuery(query);
      await checkDashboards(project, input.dashboards);
      await checkReferences(project, query);
      const row = await insertInsight(db, project.id, input, userId);
      if (input.dashboards) await setInsightDashboards(db, project.id, row.id, input.dashboards);
      return row;
    },

    async update(project: Project, userId: number, stored: InsightRow, input: SavedInsightInput): Promise<InsightRow> {
      const changesQuery = input.filters !== undefined || input.query !== undefined;
      const query = { filters: input.filters ?? stored.filters, query: input.query === undefined ? stored.query : input.query };
      if (changesQuery) parseQuery(query);
      await checkDashboards(project, input.dashboards);
      // Only a new query is checked: an update of other fields never fails on a stored one.
      if (changesQuery) await checkReferences(project, query);
      const row = (await updateInsight(db, project.id, stored.id, input, userId))!;
      if (input.dashboards) await setInsightDashboards(db, project.id, row.id, input.dashboards);
      return row;
    },

    /** Records the view, then the insight's answer (`refresh` recomputes). */
    async open(project: Project, userId: number, row: InsightRow, refresh: boolean): Promise<SavedInsightResult> {
      await recordInsightView(db, row.team_id, userId, row.id, new Date(deps.now()));
      return this.result(project, row, refresh);
    },

    /**
     * The insight's answer only if the cache holds it (PostHog's `force_cache`): otherwise a null
     * `result` with the stored `last_refresh`, and nothing is computed.
     */
    cachedResult(project: Project, row: InsightRow): SavedInsightResult {
      const parsed = parseQuery(row);
      const now = deps.now();
      const answer = parsed ? queries.cachedParsed(project, parsed, now) : null;
      if (answer) return savedInsightAnswer(answer, project.timezone, now);
      return { result: null, is_cached: false, last_refresh: row.last_refresh ? new Date(row.last_refresh).toISOString() : null, timezone: project.timezone };
    },

    /** The insight's answer through the one cache (`refresh` recomputes); a computed one stamps `last_refresh`. */
    async result(project: Project, row: InsightRow, refresh: boolean): Promise<SavedInsightResult> {
      const parsed = parseQuery(row);
      if (!parsed)
        return {
          result: null,
          is_cached: false,
          last_refresh: row.last_refresh ? new Date(row.last_refresh).toISOString() : null,
          timezone: project.timezone,
        };
      try {
        const now = deps.now();
        const answer = savedInsightAnswer(await queries.runParsed(project, parsed, now, { refresh }), project.timezone, now);
        if (!answer.is_cached) await setInsightRefreshed(db, row.id, new Date(answer.last_refresh));
        return answer;
      } catch (error) {
        throw asValidationError(error);
      }
    },
  };
}

export type SavedInsightsService = ReturnType<typeof createSavedInsightsService>;
