import type { ClickHouseClient } from '@clickhouse/client';
import { EVENTS_TABLE, queryClickhouse, type ClickHouseLayout } from '@sightline/clickhouse';
import { createHogQLCompiler, type HogQLCompiler, type HogQLFields, type HogQLNode } from '@sightline/hogql';
import type { Sql } from '@sightline/postgres';
import { filtersOf, type PropertyGroup } from '@sightline/properties';
import { compileActionMatch } from '../actions/action-match.sql';
import { actionPropertyFilters, type ActionDefinition } from '../actions/action-steps';
import { cohortMembershipSql, referencedCohortIds, UnknownCohortError, type CohortDefinition } from '../cohorts/cohort-membership.sql';
import { ChannelTypeSql } from '../common/channel-type';
import { PERSON_ID, QueryInputError } from '../common/events-sql';
import { QueryFilterError } from '../common/query-filter-error';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { findActionsByIds } from '../repositories/actions.repository';
import { loadCohortDefinitions } from '../repositories/cohorts.repository';
import { hogqlExpressions, refusedExpression, type HogQLExpression } from './query-input';
import type { QueryReferences } from './query-runner';

export interface QueryPreparationDeps {
  db: Sql;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  layout?: ClickHouseLayout;
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
  columns: {
    uuid: 'e.uuid',
    created_at: 'e.created_at',
    person_mode: 'e.person_mode',
    'person.created_at': 'e.person_created_at',
    ...Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`group_${i}.created_at`, `e.group${i}_created_at`])),
  },
  virtualPersonProperty: (key, params) => new ChannelTypeSql(params).personPropertyFrom('e.person_properties', key),
};

/** Whether a query names cohorts: a cohort filter anywhere, or a cohort breakdown. */
function usesCohorts(query: QueryReferences, testAccountFilters: PropertyGroup): boolean {
  const groups = [query.properties, testAccountFilters, ...query.series.map((s) => s.properties)];
  return query.breakdowns.some((b) => b.type === 'cohort') || groups.some((g) => filtersOf(g).some((f) => f.type === 'cohort'));
}

export interface QueryPreparation {
  /**
   * Loads the actions and cohorts a query names (an action that does not exist is a 400) and
   * parses its HogQL; answers the query's ports and the HogQL expressions it holds.
   */
  prepare(project: QueryProject, query: QueryReferences, nowMs: number): Promise<{ ports: QueryPorts; expressions: HogQLExpression[] }>;
  /**
   * Throws what running the query would for an action or cohort the project does not have (or
   * has deleted), without running it: a saved insight is checked when it is written.
   */
  checkReferences(projectId: number, query: QueryReferences): Promise<void>;
}

/** What every kind of query reads from PostgreSQL before its SQL: actions, cohorts, and its HogQL parsed. */
export function createQueryPreparation(deps: QueryPreparationDeps): QueryPreparation {
  let compiler: Promise<HogQLCompiler> | null = null;
  const portsFor = (
    teamId: number,
    timezone: string,
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
        return printer!.print(ast, { params, fields: HOGQL_EVENT_FIELDS, allowAggregations: options.allowAggregations, timezone });
      } catch (error) {
        throw refusedExpression(expressions.find((e) => e.text === expression) ?? { text: expression, attr: 'hogql' }, error);
      }
    },
    earliestEventMs: async () => {
      const rows = await queryClickhouse<{ first: string; n: string }>(deps.ch, {
        kind: 'insights.earliest_event',
        teamId,
        sql: `SELECT toUnixTimestamp64Milli(min(timestamp)) AS first, count() AS n FROM ${EVENTS_TABLE} WHERE team_id = {team:Int64}`,
        params: { team: teamId },
      });
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

  return {
    async prepare(project, query, nowMs) {
      const actions = await loadActions(project.id, query);
      // An action's steps may name cohorts and hold HogQL too: they count as the query's filters.
      const actionFilters: PropertyGroup = { type: 'AND', values: [...actions.values()].flatMap(actionPropertyFilters) };
      const withActions = { ...query, properties: { type: 'AND' as const, values: [query.properties, actionFilters] } };
      const cohorts = usesCohorts(withActions, project.testAccountFilters)
        ? await loadCohortDefinitions(deps.db, project.id)
        : new Map<number, CohortDefinition>();
      // Every HogQL expression is parsed first (in the parser's worker, under a deadline); the
      // SQL is then printed from the trees in one synchronous pass.
      const expressions = hogqlExpressions(query, query.filterTestAccounts ? project.testAccountFilters : { type: 'AND', values: [] }, actionFilters);
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
      return { ports: portsFor(project.id, project.timezone, actions, cohorts, nowMs, parsed, printer, expressions), expressions };
    },
    async checkReferences(projectId, references) {
      const actions = await loadActions(projectId, references);
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
      const cohorts = await loadCohortDefinitions(deps.db, projectId);
      const missing = [...cohortIds].find((id) => !cohorts.has(id));
      if (missing !== undefined) throw new UnknownCohortError(missing);
    },
  };
}
