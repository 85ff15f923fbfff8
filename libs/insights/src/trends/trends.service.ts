import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { EVENTS_TABLE } from '@sightline/clickhouse';
import { filtersOf, parsePropertyFilters, type PropertyGroup } from '@sightline/properties';
import { compileActionMatch } from '../actions/action-match.sql';
import type { ActionDefinition } from '../actions/action-steps';
import { findActionsByIds } from '../actions/actions.repository';
import { cohortMembershipSql, type CohortDefinition } from '../cohorts/cohort-membership.sql';
import { loadCohortDefinitions } from '../cohorts/cohorts.repository';
import type { Sql } from '@sightline/postgres';
import { QueryInputError } from '../common/events-sql';
import { TrendFilterError, type ParsedTrendFilter } from './trend-filter';
import { runTrendQuery, type TrendProject, type TrendQueryPorts, type TrendResult } from './trends.query';

/** The project columns a trend reads (a `projects` row). */
export interface TrendProjectRow {
  id: number;
  timezone: string;
  week_start_day?: number | null;
  test_account_filters?: unknown;
}

export interface TrendsServiceDeps {
  db: Sql;
  ch: ClickHouseClient;
  /** How long an answer is served from the cache; 0 turns caching off. */
  cacheTtlMs: number;
  /** The most answers kept. */
  cacheEntries?: number;
}

export interface TrendsService {
  run(project: TrendProjectRow, filter: ParsedTrendFilter, nowMs: number, options?: { refresh?: boolean }): Promise<TrendResult>;
}

/** JSON with object keys sorted, so the same query always has the same cache key. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

export function trendProject(row: TrendProjectRow): TrendProject {
  let testAccountFilters: PropertyGroup = { type: 'AND', values: [] };
  try {
    testAccountFilters = parsePropertyFilters(row.test_account_filters ?? [], 'test_account_filters', {
      types: new Set(['event', 'person', 'cohort', 'group', 'element', 'hogql']),
    });
  } catch {
    // Settings are checked when saved; a row written before that check applies no filter.
  }
  return { id: row.id, timezone: row.timezone || 'UTC', weekStartDay: row.week_start_day === 1 ? 1 : 0, testAccountFilters };
}

/** Whether a query names cohorts: a cohort filter anywhere, or a cohort breakdown. */
function usesCohorts(filter: ParsedTrendFilter, testAccountFilters: PropertyGroup): boolean {
  const groups = [filter.properties, testAccountFilters, ...filter.series.map((s) => s.properties)];
  return filter.breakdowns.some((b) => b.type === 'cohort') || groups.some((g) => filtersOf(g).some((f) => f.type === 'cohort'));
}

/**
 * Trends for the API: loads what a query names (actions, cohorts), runs it, and keeps answers
 * per (project, normalised query) for `cacheTtlMs`; `refresh` bypasses and replaces the entry.
 */
export function createTrendsService(deps: TrendsServiceDeps): TrendsService {
  const cache = new Map<string, { at: number; result: TrendResult }>();
  const maxEntries = deps.cacheEntries ?? 500;

  const portsFor = (
    teamId: number,
    actions: ReadonlyMap<number, ActionDefinition>,
    cohorts: ReadonlyMap<number, CohortDefinition>,
    nowMs: number,
  ): TrendQueryPorts => ({
    actionMatch: (id, ctx) => compileActionMatch(actions.get(id)!, { event: 'e.event', properties: 'e.properties', elementsChain: 'e.elements_chain' }, ctx),
    actionName: (id) => actions.get(id)?.name ?? String(id),
    cohortMembership: (cohortId, personIdSql, params) =>
      cohortMembershipSql(cohortId, cohorts, personIdSql, { params, teamParam: params.add(teamId, 'Int64'), nowMs }),
    cohortName: (id) => cohorts.get(id)?.name ?? String(id),
    hogql: () => {
      throw new QueryInputError(null, 'HogQL expressions are not available yet.', 'not_supported');
    },
    earliestEventMs: async () => {
      const rows = await (
        await deps.ch.query({
          query: `SELECT toUnixTimestamp64Milli(min(timestamp)) AS first, count() AS n FROM ${EVENTS_TABLE} WHERE team_id = {team:Int64}`,
          query_params: { team: teamId },
          format: 'JSONEachRow',
        })
      ).json<{ first: string; n: string }>();
      return Number(rows[0]?.n ?? 0) > 0 ? Number(rows[0]!.first) : null;
    },
  });

  return {
    async run(row, filter, nowMs, options = {}) {
      const project = trendProject(row);
      const { request: _request, ...normalised } = filter;
      const key = createHash('sha256').update(stableJson({ project, normalised })).digest('hex');
      const hit = cache.get(key);
      if (!options.refresh && deps.cacheTtlMs > 0 && hit && nowMs - hit.at < deps.cacheTtlMs) return { ...hit.result, is_cached: true };
      const cohorts = usesCohorts(filter, project.testAccountFilters) ? await loadCohortDefinitions(deps.db, project.id) : new Map<number, CohortDefinition>();
      const actionIds = filter.series.filter((s) => s.kind === 'actions').map((s) => Number(s.id));
      const actions = await findActionsByIds(deps.db, project.id, actionIds);
      const missing = actionIds.find((id) => !actions.has(id));
      if (missing !== undefined) throw new TrendFilterError('actions', `Action ${missing} does not exist in this project.`, 'action_does_not_exist');
      const result = await runTrendQuery(deps.ch, project, filter, nowMs, portsFor(project.id, actions, cohorts, nowMs));
      if (deps.cacheTtlMs > 0) {
        cache.delete(key);
        cache.set(key, { at: nowMs, result });
        // Oldest first: a Map keeps insertion order.
        while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
      }
      return result;
    },
  };
}
