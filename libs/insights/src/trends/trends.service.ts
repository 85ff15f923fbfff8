import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { EVENTS_TABLE } from '@sightline/clickhouse';
import { filtersOf, parsePropertyFilters, type PropertyGroup } from '@sightline/properties';
import { compileActionMatch } from '../actions/action-match.sql';
import type { ActionDefinition } from '../actions/action-steps';
import { findActionsByIds } from '../actions/actions.repository';
import { actionPropertyFilters } from '../actions/action-steps';
import { cohortMembershipSql, referencedCohortIds, UnknownCohortError, type CohortDefinition } from '../cohorts/cohort-membership.sql';
import { loadCohortDefinitions } from '../cohorts/cohorts.repository';
import type { Sql } from '@sightline/postgres';
import { createHogQLCompiler, type HogQLCompiler, type HogQLFields, type HogQLNode } from '@sightline/hogql';
import { PERSON_ID, QueryInputError } from '../common/events-sql';
import { TrendFilterError, type ParsedTrendFilter } from './trend-filter';
import { runFunnelQuery, type FunnelResult } from '../funnels/funnels.query';
import type { ParsedFunnelFilter } from '../funnels/funnel-filter';
import { runFunnelCorrelation, type CorrelationOptions, type CorrelationResult } from '../funnels/funnel-correlation';
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
  runFunnel(project: TrendProjectRow, filter: ParsedFunnelFilter, nowMs: number, options?: { refresh?: boolean }): Promise<FunnelResult>;
  runCorrelation(
    project: TrendProjectRow,
    filter: ParsedFunnelFilter,
    correlation: CorrelationOptions,
    nowMs: number,
    options?: { refresh?: boolean },
  ): Promise<CorrelationResult>;
  /**
   * Throws what running the query would for an action or cohort the project does not have (or
   * has deleted), without running it: a saved insight is checked when it is written.
   */
  checkReferences(
    project: TrendProjectRow,
    query: { kind: 'trend'; filter: ParsedTrendFilter } | { kind: 'funnel'; filter: ParsedFunnelFilter },
  ): Promise<void>;
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

/** The events row as HogQL expressions read it (alias `e`, persons resolved through merges). */
const HOGQL_EVENT_FIELDS: HogQLFields = {
  event: 'e.event',
  timestamp: 'e.timestamp',
  distinct_id: 'e.distinct_id',
  person_id: PERSON_ID,
  elements_chain: 'e.elements_chain',
  properties: 'e.properties',
  person_properties: 'e.person_properties',
  group_properties: (index) => `e.group${index}_properties`,
};

/** What a query names that lives in PostgreSQL: series (steps) that may be actions, filters, breakdowns. */
interface QueryReferences {
  series: { kind: 'events' | 'actions'; id: string | number | null; properties: PropertyGroup; math?: string; math_hogql?: string | null }[];
  properties: PropertyGroup;
  breakdowns: { type: string; property: string | number }[];
  extraActionIds?: number[];
}

const funnelReferences = (filter: ParsedFunnelFilter): QueryReferences => ({
  series: filter.steps,
  properties: filter.properties,
  breakdowns: filter.breakdowns,
  extraActionIds: filter.exclusions.flatMap((x) => (x.actionId === null ? [] : [x.actionId])),
});

/**
 * ClickHouse errors a HogQL expression can cause by itself (a function given the wrong type, a
 * value that does not parse): the client's mistake, answered as a 400 without ClickHouse's text.
 */
const HOGQL_INPUT_ERRORS = new Set([
  'ILLEGAL_TYPE_OF_ARGUMENT',
  'NO_COMMON_TYPE',
  'TYPE_MISMATCH',
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_DATETIME',
  'CANNOT_PARSE_DATE',
  'CANNOT_CONVERT_TYPE',
  'BAD_ARGUMENTS',
  'ARGUMENT_OUT_OF_BOUND',
  'ILLEGAL_DIVISION',
  'NUMBER_OF_ARGUMENTS_DOESNT_MATCH',
  'ILLEGAL_COLUMN',
  'NOT_AN_AGGREGATE',
  'ILLEGAL_AGGREGATION',
  'CANNOT_COMPILE_REGEXP',
  'UNKNOWN_IDENTIFIER',
]);

async function guardHogQL<R>(hasHogQL: boolean, run: () => Promise<R>): Promise<R> {
  try {
    return await run();
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    if (hasHogQL && typeof type === 'string' && HOGQL_INPUT_ERRORS.has(type)) {
      throw new QueryInputError('hogql', `The HogQL expression cannot be evaluated on these events (${type}).`, 'invalid_hogql');
    }
    throw error;
  }
}

/** Every HogQL expression a query holds: hogql maths, breakdowns and filters. */
function hogqlExpressions(query: QueryReferences, testAccountFilters: PropertyGroup): string[] {
  const groups = [query.properties, testAccountFilters, ...query.series.map((s) => s.properties)];
  return [
    ...query.series.flatMap((s) => (s.math === 'hogql' && s.math_hogql ? [s.math_hogql] : [])),
    ...query.breakdowns.flatMap((b) => (b.type === 'hogql' ? [String(b.property)] : [])),
    ...groups.flatMap((g) => filtersOf(g).flatMap((f) => (f.type === 'hogql' ? [f.key] : []))),
  ];
}

const usesHogQL = (query: QueryReferences, testAccountFilters: PropertyGroup) => hogqlExpressions(query, testAccountFilters).length > 0;

/** Whether a query names cohorts: a cohort filter anywhere, or a cohort breakdown. */
function usesCohorts(query: QueryReferences, testAccountFilters: PropertyGroup): boolean {
  const groups = [query.properties, testAccountFilters, ...query.series.map((s) => s.properties)];
  return query.breakdowns.some((b) => b.type === 'cohort') || groups.some((g) => filtersOf(g).some((f) => f.type === 'cohort'));
}

/**
 * Trends for the API: loads what a query names (actions, cohorts), runs it, and keeps answers
 * per (project, normalised query) for `cacheTtlMs`; `refresh` bypasses and replaces the entry.
 */
export function createTrendsService(deps: TrendsServiceDeps): TrendsService {
  const cache = new Map<string, { at: number; result: unknown }>();
  const maxEntries = deps.cacheEntries ?? 500;

  let compiler: Promise<HogQLCompiler> | null = null;
  const portsFor = (
    teamId: number,
    actions: ReadonlyMap<number, ActionDefinition>,
    cohorts: ReadonlyMap<number, CohortDefinition>,
    nowMs: number,
    hogql: ReadonlyMap<string, HogQLNode>,
    printer: HogQLCompiler | null,
  ): TrendQueryPorts => ({
    actionMatch: (id, ctx) => compileActionMatch(actions.get(id)!, { event: 'e.event', properties: 'e.properties', elementsChain: 'e.elements_chain' }, ctx),
    actionName: (id) => actions.get(id)?.name ?? String(id),
    cohortMembership: (cohortId, personIdSql, params) =>
      cohortMembershipSql(cohortId, cohorts, personIdSql, { params, teamParam: params.add(teamId, 'Int64'), nowMs }),
    cohortName: (id) => cohorts.get(id)?.name ?? String(id),
    hogql: (expression, params, options) => {
      const ast = hogql.get(expression);
      if (!ast) throw new QueryInputError('hogql', 'HogQL expressions are not available.', 'not_supported');
      return printer!.print(ast, { params, fields: HOGQL_EVENT_FIELDS, allowAggregations: options.allowAggregations });
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

  /** The live actions a query names; one that does not exist is a 400. */
  const loadActions = async (projectId: number, query: QueryReferences): Promise<Map<number, ActionDefinition>> => {
    const actionIds = [...query.series.filter((s) => s.kind === 'actions').map((s) => Number(s.id)), ...(query.extraActionIds ?? [])];
    const actions = await findActionsByIds(deps.db, projectId, actionIds);
    const missing = actionIds.find((id) => !actions.has(id));
    if (missing !== undefined) throw new TrendFilterError('actions', `Action ${missing} does not exist in this project.`, 'action_does_not_exist');
    return actions;
  };

  /** Loads the actions and cohorts a query names; an action that does not exist is a 400. */
  const prepare = async (project: TrendProject, query: QueryReferences, nowMs: number): Promise<TrendQueryPorts> => {
    const actions = await loadActions(project.id, query);
    // An action's steps may name cohorts and hold HogQL too: they count as the query's filters.
    const actionFilters: PropertyGroup = { type: 'AND', values: [...actions.values()].flatMap(actionPropertyFilters) };
    const withActions = { ...query, properties: { type: 'AND' as const, values: [query.properties, actionFilters] } };
    const cohorts = usesCohorts(withActions, project.testAccountFilters)
      ? await loadCohortDefinitions(deps.db, project.id)
      : new Map<number, CohortDefinition>();
    // Every HogQL expression is parsed first (in the parser's worker, under a deadline); the
    // SQL is then printed from the trees in one synchronous pass.
    const expressions = hogqlExpressions(withActions, project.testAccountFilters);
    const printer = expressions.length ? await (compiler ??= createHogQLCompiler()) : null;
    const parsed = new Map<string, HogQLNode>();
    for (const expression of expressions) if (!parsed.has(expression)) parsed.set(expression, await printer!.parse(expression));
    return portsFor(project.id, actions, cohorts, nowMs, parsed, printer);
  };

  /** Serves `compute` from the cache for (kind, project, normalised query) unless refreshing. */
  const cached = async <R extends { is_cached: boolean }>(
    kind: string,
    project: TrendProject,
    normalised: unknown,
    nowMs: number,
    refresh: boolean,
    compute: () => Promise<R>,
  ): Promise<R> => {
    const key = createHash('sha256').update(stableJson({ kind, project, normalised })).digest('hex');
    const hit = cache.get(key);
    if (!refresh && deps.cacheTtlMs > 0 && hit && nowMs - hit.at < deps.cacheTtlMs) return { ...(hit.result as R), is_cached: true };
    const result = await compute();
    if (deps.cacheTtlMs > 0) {
      cache.delete(key);
      cache.set(key, { at: nowMs, result });
      // Oldest first: a Map keeps insertion order.
      while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    }
    return result;
  };

  return {
    async run(row, filter, nowMs, options = {}) {
      const project = trendProject(row);
      const { request: _request, ...normalised } = filter;
      return cached('trend', project, normalised, nowMs, options.refresh ?? false, async () =>
        guardHogQL(usesHogQL(filter, project.testAccountFilters), async () =>
          runTrendQuery(deps.ch, project, filter, nowMs, await prepare(project, filter, nowMs)),
        ),
      );
    },
    async runFunnel(row, filter, nowMs, options = {}) {
      const project = trendProject(row);
      const { request: _request, ...normalised } = filter;
      return cached('funnel', project, normalised, nowMs, options.refresh ?? false, async () =>
        guardHogQL(usesHogQL(funnelReferences(filter), project.testAccountFilters), async () =>
          runFunnelQuery(deps.ch, project, filter, nowMs, await prepare(project, funnelReferences(filter), nowMs)),
        ),
      );
    },
    async runCorrelation(row, filter, correlation, nowMs, options = {}) {
      const project = trendProject(row);
      const { request: _request, ...normalised } = filter;
      return cached('correlation', project, { normalised, correlation }, nowMs, options.refresh ?? false, async () =>
        runFunnelCorrelation(deps.ch, project, filter, correlation, nowMs, await prepare(project, funnelReferences(filter), nowMs)),
      );
    },
    async checkReferences(row, query) {
      const references = query.kind === 'trend' ? query.filter : funnelReferences(query.filter);
      const actions = await loadActions(row.id, references);
      // Cohorts in the filters, the series' filters and the named actions' steps, and cohort breakdowns.
      const filters: PropertyGroup = {
        type: 'AND',
        values: [references.properties, ...references.series.map((s) => s.properties), ...[...actions.values()].flatMap(actionPropertyFilters)],
      };
      const cohortIds = new Set([
        ...referencedCohortIds(filters),
        ...references.breakdowns.flatMap((b) => (b.type === 'cohort' && Number.isInteger(Number(b.property)) ? [Number(b.property)] : [])),
      ]);
      if (cohortIds.size === 0) return;
      const cohorts = await loadCohortDefinitions(deps.db, row.id);
      const missing = [...cohortIds].find((id) => !cohorts.has(id));
      if (missing !== undefined) throw new UnknownCohortError(missing);
    },
  };
}
