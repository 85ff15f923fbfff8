import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { QueryFilterError } from '../common/query-filter-error';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { actorColumns, actorsOfPage, parseFunnelActorsPage, type FunnelActorsPage, type FunnelActorsResult } from '../funnels/funnel-actors';
import { actorsQueryResponse } from '../funnels/funnel-actors-response';
import type { QueryRunner } from '../runners/query-runner';
import {
  parseStickinessFilter,
  STICKINESS_OPERATORS,
  stickinessQueryToFilter,
  type ParsedStickinessFilter,
  type StickinessOperator,
} from './stickiness-filter';
import { stickinessPeriods } from './stickiness.query';
import { StickinessSqlBuilder } from './stickiness.sql';

/** The actors of one stickiness bar: a series (and period), its interval count and a page. */
export interface StickinessActorsQuery {
  stickiness: ParsedStickinessFilter;
  /** The bar: actors active on `day` intervals (by `operator`). */
  day: number;
  operator: StickinessOperator;
  series: number;
  compare: 'current' | 'previous';
  page: FunnelActorsPage;
}

function integer(node: Record<string, unknown>, key: string, attr: string, min: number, max: number): number | null {
  const value = node[key];
  if (value === undefined || value === null) return null;
  const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max)
    throw new QueryFilterError(attr, `${key} must be an integer from ${min} to ${max}.`, 'invalid');
  return n;
}

/**
 * An InsightActorsQuery over a StickinessQuery (or PostHog's StickinessActorsQuery), bare or as
 * an ActorsQuery's source: `day` (the bar, 1 … N), `operator` (StickinessActorsQuery: exact, gte,
 * lte; a cumulative stickiness reads gte, as its bars count), `series` (index, default 0) and
 * `compare` (current or previous), with the ActorsQuery's page.
 */
function parseStickinessActors(node: Record<string, unknown>, outer: Record<string, unknown> | null): StickinessActorsQuery {
  const prefix = outer === null ? 'query__' : 'query__source__';
  const source = node['source'];
  if (!isJsonObject(source) || source['kind'] !== 'StickinessQuery')
    throw new QueryFilterError(`${prefix}source`, 'The actors of a stickiness bar need its StickinessQuery as source.', 'required');
  const stickiness = parseStickinessFilter(stickinessQueryToFilter(source));
  const day = integer(node, 'day', `${prefix}day`, 1, 100_000);
  if (day === null) throw new QueryFilterError(`${prefix}day`, 'The actors of a stickiness bar need its interval count (day).', 'required');
  const rawOperator = node['operator'];
  if (rawOperator !== undefined && rawOperator !== null && (typeof rawOperator !== 'string' || !Object.hasOwn(STICKINESS_OPERATORS, rawOperator)))
    throw new QueryFilterError(`${prefix}operator`, `operator must be one of: ${Object.keys(STICKINESS_OPERATORS).join(', ')}.`, 'invalid_choice');
  const series = integer(node, 'series', `${prefix}series`, 0, stickiness.series.length - 1) ?? 0;
  const compare = node['compare'] ?? 'current';
  if (compare !== 'current' && compare !== 'previous')
    throw new QueryFilterError(`${prefix}compare`, 'compare must be "current" or "previous".', 'invalid_choice');
  if (compare === 'previous' && !stickiness.compare) throw new QueryFilterError(`${prefix}compare`, 'The stickiness compares no previous period.', 'invalid');
  const page = parseFunnelActorsPage(outer ?? {});
  if (page.search !== null) throw new QueryFilterError('query__search', 'search is not served for stickiness actors.', 'not_supported');
  const operator = stickiness.cumulative ? 'gte' : ((rawOperator as StickinessOperator | null | undefined) ?? 'exact');
  return { stickiness, day, operator, series, compare, page };
}

async function runStickinessActors(
  stores: { ch: ClickHouseClient; db: Sql },
  project: QueryProject,
  query: StickinessActorsQuery,
  nowMs: number,
  ports: QueryPorts,
): Promise<FunnelActorsResult> {
  const { stickiness, page } = query;
  const series = stickiness.series[query.series]!;
  const groupIndex = series.math === 'unique_group' ? series.math_group_type_index : null;
  const { periods, properties } = await stickinessPeriods(project, stickiness, nowMs, ports);
  const period = periods.find((p) => (p.label ?? 'current') === query.compare)!;
  const builder = new StickinessSqlBuilder(
    { series, properties, range: period.range, intervalCount: stickiness.interval_count, criteria: stickiness.criteria },
    { ...ports, teamId: project.id, nowMs },
  );
  const { sql, params } = builder.actorsSql({ day: query.day, operator: query.operator, limit: page.limit, offset: page.offset });
  const found = (await queryClickhouse<{ actor_id: string }>(stores.ch, { kind: 'stickiness.actors', teamId: project.id, sql, params })).map((r) => r.actor_id);
  return actorsOfPage(stores.db, project.id, groupIndex, actorColumns(page, groupIndex), found, page);
}

/** The persons (or groups) of one stickiness bar; pages are not cached. */
export const stickinessActorsRunner: QueryRunner<StickinessActorsQuery, FunnelActorsResult> = {
  label: 'stickiness_actors',
  parseLegacy: (input) => parseStickinessActors(input, null),
  references: ({ stickiness }) => ({
    series: stickiness.series,
    properties: stickiness.properties,
    breakdowns: [],
    filterTestAccounts: stickiness.filter_test_accounts,
  }),
  calculate: ({ ch, db, project, ports, nowMs }, query) => runStickinessActors({ ch, db }, project, query, nowMs, ports),
  queryApi: {
    insightActorsOf: 'StickinessQuery',
    parse: (node, outer) => parseStickinessActors(node, outer),
    actorsSource: true,
    response: actorsQueryResponse,
  },
};
