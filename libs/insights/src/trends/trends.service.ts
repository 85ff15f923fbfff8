import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { EVENTS_TABLE, type ClickHouseLayout } from '@sightline/clickhouse';
import { filtersOf, type PropertyGroup } from '@sightline/properties';
import { compileActionMatch } from '../actions/action-match.sql';
import type { ActionDefinition } from '../actions/action-steps';
import { findActionsByIds } from '../repositories/actions.repository';
import { actionPropertyFilters } from '../actions/action-steps';
import { cohortMembershipSql, referencedCohortIds, UnknownCohortError, type CohortDefinition } from '../cohorts/cohort-membership.sql';
import { loadCohortDefinitions } from '../repositories/cohorts.repository';
import type { Sql } from '@sightline/postgres';
import type { Metrics } from '@sightline/metrics';
import { createHogQLCompiler, type HogQLCompiler, type HogQLFields, type HogQLNode } from '@sightline/hogql';
import { PERSON_ID, QueryInputError } from '../common/events-sql';
import { ChannelTypeSql } from '../common/channel-type';
import { type ParsedTrendFilter } from './trend-filter';
import { runFunnelQuery, type FunnelResult } from '../funnels/funnels.query';
import { runFunnelActorsQuery, type FunnelActorsPage, type FunnelActorsRequest, type FunnelActorsResult } from '../funnels/funnel-actors';
import type { ParsedFunnelFilter } from '../funnels/funnel-filter';
import { runFunnelCorrelation, type CorrelationOptions, type CorrelationResult } from '../funnels/funnel-correlation';
import { runCorrelationActorsQuery, type CorrelationActorsRequest } from '../funnels/funnel-correlation-actors';
import { runTrendQuery, type TrendResult } from './trends.query';
import { jsonByteLength } from '@sightline/http';
import { createAnswerCache, DEFAULT_ANSWER_CACHE_BYTES } from '../common/answer-cache';
import { checkProjectSettings, hogqlExpressions, refusedExpression, withInputErrors, type HogQLExpression } from './query-input';
import { QueryFilterError } from '../common/query-filter-error';
import { queryProject, type QueryProject, type QueryProjectRow } from '../common/query-project';
import { type QueryPorts } from '../common/query-ports';

/** The largest answer (its JSON) a trend, funnel or correlation may give; docs/http-api.md#limits. */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export interface TrendsServiceDeps {
  db: Sql;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  layout?: ClickHouseLayout;
  /** How long an answer is served from the cache; 0 turns caching off. */
  cacheTtlMs: number;
  /** The most bytes (of the answers' JSON) the cache holds; default DEFAULT_ANSWER_CACHE_BYTES. */
  cacheMaxBytes?: number;
  /** The largest answer given; default MAX_ANSWER_BYTES. */
  maxAnswerBytes?: number;
  /** Where the time each computed answer took is observed (insight_query_duration_seconds); absent: nowhere. */
  metrics?: Pick<Metrics, 'insightQueryDuration'>;
}

export interface TrendsService {
  run(project: QueryProjectRow, filter: ParsedTrendFilter, nowMs: number, options?: { refresh?: boolean }): Promise<TrendResult>;
  runFunnel(project: QueryProjectRow, filter: ParsedFunnelFilter, nowMs: number, options?: { refresh?: boolean }): Promise<FunnelResult>;
  runCorrelation(
    project: QueryProjectRow,
    filter: ParsedFunnelFilter,
    correlation: CorrelationOptions,
    nowMs: number,
    options?: { refresh?: boolean },
  ): Promise<CorrelationResult>;
  /** A page of the actors of a funnel step or funnel trend period (PostHog's FunnelsActorsQuery in an ActorsQuery). */
  runFunnelActors(
    project: QueryProjectRow,
    filter: ParsedFunnelFilter,
    request: FunnelActorsRequest,
    page: FunnelActorsPage,
    nowMs: number,
  ): Promise<FunnelActorsResult>;
  /** A page of the actors behind a funnel correlation row (PostHog's FunnelCorrelationActorsQuery in an ActorsQuery). */
  runCorrelationActors(
    project: QueryProjectRow,
    filter: ParsedFunnelFilter,
    request: CorrelationActorsRequest,
    page: FunnelActorsPage,
    nowMs: number,
  ): Promise<FunnelActorsResult>;
  /**
   * Throws what running the query would for an action or cohort the project does not have (or
   * has deleted), without running it: a saved insight is checked when it is written.
   */
  checkReferences(
    project: QueryProjectRow,
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
  virtualPersonProperty: (key, params) => new ChannelTypeSql(params).personPropertyFrom('e.person_properties', key),
};

/** What a query names that lives in PostgreSQL: series (steps) that may be actions, filters, breakdowns. */
interface QueryReferences {
  series: { kind: 'events' | 'actions'; id: string | number | null; properties: PropertyGroup; math?: string; math_hogql?: string | null }[];
  properties: PropertyGroup;
  breakdowns: { type: string; property: string | number }[];
  extraActionIds?: number[];
  aggregateByHogQL?: string | null;
}

const funnelReferences = (filter: ParsedFunnelFilter): QueryReferences => ({
  series: filter.steps,
  properties: filter.properties,
  breakdowns: filter.breakdowns,
  extraActionIds: filter.exclusions.flatMap((x) => (x.actionId === null ? [] : [x.actionId])),
  aggregateByHogQL: filter.aggregateByHogQL,
});

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
  const cache = deps.cacheTtlMs > 0 ? createAnswerCache<object>({ ttlMs: deps.cacheTtlMs, maxBytes: deps.cacheMaxBytes ?? DEFAULT_ANSWER_CACHE_BYTES }) : null;
  const maxAnswerBytes = deps.maxAnswerBytes ?? MAX_ANSWER_BYTES;

  let compiler: Promise<HogQLCompiler> | null = null;
  const portsFor = (
    teamId: number,
    actions: ReadonlyMap<number, ActionDefinition>,
    cohorts: ReadonlyMap<number, CohortDefinition>,
    nowMs: number,
    hogql: ReadonlyMap<string, HogQLNode>,
    printer: HogQLCompiler | null,
    expressions: readonly HogQLExpression[],
  ): QueryPorts => ({
    layout: deps.layout,
    actionMatch: (id, ctx) => compileActionMatch(actions.get(id)!, { event: 'e.event', properties: 'e.properties', elementsChain: 'e.elements_chain' }, ctx),
    actionName: (id) => actions.get(id)?.name ?? String(id),
    actionEventNames: (id) => (actions.get(id)?.steps ?? []).flatMap((step) => (step.event ? [step.event] : [])),
    cohortMembership: (cohortId, personIdSql, params) =>
      cohortMembershipSql(cohortId, cohorts, personIdSql, { params, teamParam: params.add(teamId, 'Int64'), nowMs }),
    cohortName: (id) => cohorts.get(id)?.name ?? String(id),
    hogql: (expression, params, options) => {
      const ast = hogql.get(expression);
      if (!ast) throw new QueryInputError('hogql', 'HogQL expressions are not available.', 'not_supported');
      try {
        return printer!.print(ast, { params, fields: HOGQL_EVENT_FIELDS, allowAggregations: options.allowAggregations });
      } catch (error) {
        throw refusedExpression(expressions.find((e) => e.text === expression) ?? { text: expression, attr: 'hogql' }, error);
      }
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
    if (missing !== undefined) throw new QueryFilterError('actions', `Action ${missing} does not exist in this project.`, 'action_does_not_exist');
    return actions;
  };

  /**
   * Loads the actions and cohorts a query names (an action that does not exist is a 400) and
   * parses its HogQL; answers the query's ports and the HogQL expressions it holds.
   */
  const prepare = async (
    project: QueryProject,
    query: QueryReferences,
    filterTestAccounts: boolean,
    nowMs: number,
  ): Promise<{ ports: QueryPorts; expressions: HogQLExpression[] }> => {
    const actions = await loadActions(project.id, query);
    // An action's steps may name cohorts and hold HogQL too: they count as the query's filters.
    const actionFilters: PropertyGroup = { type: 'AND', values: [...actions.values()].flatMap(actionPropertyFilters) };
    const withActions = { ...query, properties: { type: 'AND' as const, values: [query.properties, actionFilters] } };
    const cohorts = usesCohorts(withActions, project.testAccountFilters)
      ? await loadCohortDefinitions(deps.db, project.id)
      : new Map<number, CohortDefinition>();
    // Every HogQL expression is parsed first (in the parser's worker, under a deadline); the
    // SQL is then printed from the trees in one synchronous pass.
    const expressions = hogqlExpressions(query, filterTestAccounts ? project.testAccountFilters : { type: 'AND', values: [] }, actionFilters);
    const printer = expressions.length ? await (compiler ??= createHogQLCompiler()) : null;
    const parsed = new Map<string, HogQLNode>();
    for (const expression of expressions) {
      if (parsed.has(expression.text)) continue;
      try {
        parsed.set(expression.text, await printer!.parse(expression.text));
      } catch (error) {
        throw refusedExpression(expression, error);
      }
    }
    return { ports: portsFor(project.id, actions, cohorts, nowMs, parsed, printer, expressions), expressions };
  };

  /** Runs a query once the project's settings allow it, its HogQL parsed and ClickHouse's input errors answered as 400s. */
  const execute = async <R>(
    project: ReturnType<typeof queryProject>,
    query: QueryReferences,
    filterTestAccounts: boolean,
    nowMs: number,
    run: (ports: QueryPorts) => Promise<R>,
  ): Promise<R> => {
    checkProjectSettings(project, filterTestAccounts);
    const { ports, expressions } = await prepare(project, query, filterTestAccounts, nowMs);
    return withInputErrors(project, expressions, () => run(ports));
  };

  /** Serves `compute` from the cache for (kind, project, normalised query) unless refreshing. */
  const cached = async <R extends { is_cached: boolean }>(
    kind: string,
    project: QueryProject,
    normalised: unknown,
    nowMs: number,
    refresh: boolean,
    compute: () => Promise<R>,
  ): Promise<R> => {
    const key = createHash('sha256').update(stableJson({ kind, project, normalised })).digest('hex');
    const hit = refresh ? undefined : cache?.get(key, nowMs);
    if (hit) return { ...(hit as R), is_cached: true };
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    let result: R;
    try {
      result = await compute();
    } catch (error) {
      deps.metrics?.insightQueryDuration.observe({ kind, result: 'error' }, seconds());
      throw error;
    }
    deps.metrics?.insightQueryDuration.observe({ kind, result: 'ok' }, seconds());
    // Measured as it will be sent (in slices, between other requests' work): an answer past the
    // bound is refused, and the cache weighs what it keeps by these bytes.
    const bytes = await jsonByteLength(result, maxAnswerBytes);
    if (bytes === null) {
      throw new QueryInputError(
        null,
        `The answer would be larger than ${Math.round(maxAnswerBytes / 1024 / 1024)} MiB, the most one answer may hold. Narrow the date range, use a longer interval, or ask for fewer series or breakdown values.`,
        'answer_too_large',
      );
    }
    cache?.set(key, result, bytes, nowMs);
    return result;
  };

  return {
    async run(row, filter, nowMs, options = {}) {
      const project = queryProject(row);
      const { request: _request, ...normalised } = filter;
      return cached('trend', project, normalised, nowMs, options.refresh ?? false, () =>
        execute(project, filter, filter.filter_test_accounts, nowMs, (ports) => runTrendQuery(deps.ch, project, filter, nowMs, ports)),
      );
    },
    async runFunnel(row, filter, nowMs, options = {}) {
      const project = queryProject(row);
      const { request: _request, ...normalised } = filter;
      return cached('funnel', project, normalised, nowMs, options.refresh ?? false, () =>
        execute(project, funnelReferences(filter), filter.filter_test_accounts, nowMs, (ports) => runFunnelQuery(deps.ch, project, filter, nowMs, ports)),
      );
    },
    async runCorrelation(row, filter, correlation, nowMs, options = {}) {
      const project = queryProject(row);
      const { request: _request, ...normalised } = filter;
      return cached('correlation', project, { normalised, correlation }, nowMs, options.refresh ?? false, () =>
        execute(project, funnelReferences(filter), filter.filter_test_accounts, nowMs, (ports) =>
          runFunnelCorrelation(deps.ch, project, filter, correlation, nowMs, ports),
        ),
      );
    },
    async runFunnelActors(row, filter, request, page, nowMs) {
      const project = queryProject(row);
      return execute(project, funnelReferences(filter), filter.filter_test_accounts, nowMs, (ports) =>
        runFunnelActorsQuery(deps, project, filter, request, page, nowMs, ports),
      );
    },
    async runCorrelationActors(row, filter, request, page, nowMs) {
      const project = queryProject(row);
      return execute(project, funnelReferences(filter), filter.filter_test_accounts, nowMs, (ports) =>
        runCorrelationActorsQuery(deps, project, filter, request, page, nowMs, ports),
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
