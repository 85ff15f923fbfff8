import { eventsQueryRunner } from '../events-query/events-query.runner';
import { funnelActorsRunner } from '../funnels/funnel-actors.runner';
import { funnelCorrelationActorsRunner } from '../funnels/funnel-correlation-actors.runner';
import { funnelCorrelationRunner } from '../funnels/funnel-correlation.runner';
import { funnelsRunner } from '../funnels/funnels.runner';
import { hogqlQueryRunner } from '../hogql/hogql-query.runner';
import { lifecycleActorsRunner } from '../lifecycle/lifecycle-actors.runner';
import { lifecycleRunner } from '../lifecycle/lifecycle.runner';
import { pathsActorsRunner } from '../paths/paths-actors.runner';
import { pathsRunner } from '../paths/paths.runner';
import { retentionActorsRunner } from '../retention/retention-actors.runner';
import { retentionRunner } from '../retention/retention.runner';
import { stickinessActorsRunner } from '../stickiness/stickiness-actors.runner';
import { stickinessRunner } from '../stickiness/stickiness.runner';
import { trendActorsRunner } from '../trends/trend-actors.runner';
import { trendsRunner } from '../trends/trends.runner';
import type { QueryRunner } from './query-runner';

/**
 * Every query kind and its runner, by PostHog's node kind (get_query_runner in
 * posthog/hogql_queries/query_runner.py). The only dispatch: every entry point (legacy insight
 * routes, the query API, saved insights) runs a kind's query through the query service, which
 * finds its runner here. A new kind is its runner (`<kind>.runner.ts` in its folder) and one line.
 */
export const QUERY_RUNNERS = {
  TrendsQuery: trendsRunner,
  FunnelsQuery: funnelsRunner,
  FunnelCorrelationQuery: funnelCorrelationRunner,
  FunnelsActorsQuery: funnelActorsRunner,
  FunnelCorrelationActorsQuery: funnelCorrelationActorsRunner,
  StickinessQuery: stickinessRunner,
  /** PostHog's StickinessActorsQuery; also its InsightActorsQuery over a StickinessQuery (queryApi.insightActorsOf). */
  StickinessActorsQuery: stickinessActorsRunner,
  LifecycleQuery: lifecycleRunner,
  /** No node kind of its own in PostHog: its InsightActorsQuery over a LifecycleQuery (queryApi.insightActorsOf). */
  LifecycleActorsQuery: lifecycleActorsRunner,
  RetentionQuery: retentionRunner,
  /** No node kind of its own in PostHog: its InsightActorsQuery over a RetentionQuery (queryApi.insightActorsOf). */
  RetentionActorsQuery: retentionActorsRunner,
  EventsQuery: eventsQueryRunner,
  PathsQuery: pathsRunner,
  /** No node kind of its own in PostHog: its InsightActorsQuery over a PathsQuery (the persons on an edge). */
  PathsActorsQuery: pathsActorsRunner,
  HogQLQuery: hogqlQueryRunner,
  /** No node kind of its own in PostHog: its InsightActorsQuery over a TrendsQuery. */
  TrendsActorsQuery: trendActorsRunner,
};

export type QueryKind = keyof typeof QUERY_RUNNERS;
/** The checked query of a kind (what its runner parses to). */
export type QueryOf<K extends QueryKind> = (typeof QUERY_RUNNERS)[K] extends QueryRunner<infer Q, infer _A> ? Q : never;
/** The answer of a kind (what its runner calculates). */
export type AnswerOf<K extends QueryKind> = (typeof QUERY_RUNNERS)[K] extends QueryRunner<infer _Q, infer A> ? A : never;
/** A kind and its checked query, of any kind. */
export type ParsedQuery = { [K in QueryKind]: { kind: K; query: QueryOf<K> } }[QueryKind];

export const isQueryKind = (kind: unknown): kind is QueryKind => typeof kind === 'string' && Object.hasOwn(QUERY_RUNNERS, kind);

/** A kind's runner, its types erased (the service treats every kind alike). */
export const runnerOf = (kind: QueryKind): QueryRunner<unknown, unknown> => QUERY_RUNNERS[kind] as unknown as QueryRunner<unknown, unknown>;
