import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '@sightline/postgres';
import type { PropertyGroup } from '@sightline/properties';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';

/** What a query names that lives in PostgreSQL or holds HogQL: series (steps) that may be actions, filters, breakdowns. */
export interface QueryReferences {
  series: { kind: 'events' | 'actions'; id: string | number | null; properties: PropertyGroup; math?: string; math_hogql?: string | null }[];
  properties: PropertyGroup;
  breakdowns: { type: string; property: string | number }[];
  /** Actions named outside the series (a funnel's exclusions). */
  extraActionIds?: number[];
  /** A funnel's `funnel_aggregate_by_hogql`. */
  aggregateByHogQL?: string | null;
  /** Other HogQL expressions it holds, each with the field holding it (an EventsQuery's select, where, orderBy). */
  hogql?: readonly { text: string; attr: string }[];
  /** The query applies the project's test-account filters. */
  filterTestAccounts: boolean;
}

/** What a runner's calculation reads: the stores, the project, the loaded references (ports) and the request's clock. */
export interface QueryContext {
  ch: ClickHouseClient;
  db: Sql;
  project: QueryProject;
  ports: QueryPorts;
  nowMs: number;
}

/**
 * One kind of query (PostHog's QueryRunner, posthog/hogql_queries/query_runner.py): how its input
 * is parsed, what it names, how its answer is computed (its SQL builders, then ClickHouse) and
 * shaped for the query API. The query service (runners/query-service.ts) does the rest for
 * every kind alike: project settings, actions, cohorts and HogQL, the answer cache, the metric
 * and the answer's size bound.
 */
export interface QueryRunner<Q, A> {
  /** The label of its answers in the insight_query_duration_seconds metric and in the cache key. */
  readonly label: string;
  /**
   * A saved insight can be of this kind: its node (in `query`) or its legacy `filters` with this
   * `insight` value (TRENDS, FUNNELS) run as it. Absent: not an insight kind.
   */
  readonly legacyInsight?: string;
  /** Parse: the legacy insight filter (insights/trend/, insights/funnel/, persons/funnel/, …) as the checked query. */
  parseLegacy(input: Record<string, unknown>): Q;
  /** The query API's (POST /query/) parse and shape of this kind; absent: the query API does not take it. */
  queryApi?: QueryApiForm<Q, A>;
  references(query: Q): QueryReferences;
  /** What the answer depends on besides the project (the answer cache's key); absent: answers are not cached (pages of actors). */
  cacheKey?(query: Q): unknown;
  /** An answer that needs no query at all (a trend without series), or null. */
  shortcut?(query: Q, project: QueryProject, nowMs: number): A | null;
  /** SQL, then run: the answer from ClickHouse. */
  calculate(context: QueryContext, query: Q): Promise<A>;
}

/** A query kind as the query API takes and answers it. */
export interface QueryApiForm<Q, A> {
  /** Parse: a query node of this kind (PostHog's schema); `outer` is the ActorsQuery around it, else null. */
  parse(node: Record<string, unknown>, outer: Record<string, unknown> | null): Q;
  /** It may also be sent as an ActorsQuery's `source` (the kinds that list actors). */
  actorsSource?: boolean;
  /**
   * It answers PostHog's InsightActorsQuery (the actors of one cell of an insight) whose `source`
   * is a node of this kind, bare or as an ActorsQuery's source; parse then receives the
   * InsightActorsQuery node.
   */
  insightActorsOf?: string;
  /** Shape: the answer as the query API's response (`results`, `is_cached`, `last_refresh`, …). */
  response(answer: A, project: QueryProject, nowMs: number): Record<string, unknown>;
}
