import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { DateTime } from 'luxon';
import { formatBucketDay, startOfInterval } from '../common/date-range';
import { QueryFilterError } from '../common/query-filter-error';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { actorColumns, actorsOfPage, parseFunnelActorsPage, type FunnelActorsPage, type FunnelActorsResult } from '../funnels/funnel-actors';
import { actorsQueryResponse } from '../funnels/funnel-actors-response';
import type { QueryRunner } from '../runners/query-runner';
import { LIFECYCLE_STATUSES, lifecycleQueryToFilter, parseLifecycleFilter, type LifecycleStatus, type ParsedLifecycleFilter } from './lifecycle-filter';
import { lifecycleSql } from './lifecycle.query';

/** The actors of one lifecycle bar: an interval (`day`) and a status, either may be absent, and a page. */
export interface LifecycleActorsQuery {
  lifecycle: ParsedLifecycleFilter;
  /** The interval, as the answer's `days[i]` gives it (a date, or a date-time for hours); null: every interval. */
  day: string | null;
  status: LifecycleStatus | null;
  page: FunnelActorsPage;
}

/**
 * An InsightActorsQuery over a LifecycleQuery, bare or as an ActorsQuery's source (PostHog's
 * LifecycleQueryRunner.to_actors_query): `day` (the interval a bar stands for, read in the
 * project's timezone) and `status` (new, returning, resurrecting, dormant).
 */
function parseLifecycleActors(node: Record<string, unknown>, outer: Record<string, unknown> | null): LifecycleActorsQuery {
  const prefix = outer === null ? 'query__' : 'query__source__';
  const source = node['source'];
  if (!isJsonObject(source) || source['kind'] !== 'LifecycleQuery')
    throw new QueryFilterError(`${prefix}source`, 'The actors of a lifecycle bar need its LifecycleQuery as source.', 'required');
  const lifecycle = parseLifecycleFilter(lifecycleQueryToFilter(source));
  const day = node['day'] ?? null;
  if (day !== null && (typeof day !== 'string' || day.length > 40 || !DateTime.fromISO(day.replace(' ', 'T')).isValid))
    throw new QueryFilterError(`${prefix}day`, 'day must be a date (or a date-time), as the lifecycle answer gives it in days.', 'invalid');
  const status = node['status'] ?? null;
  if (status !== null && !(LIFECYCLE_STATUSES as readonly unknown[]).includes(status))
    throw new QueryFilterError(`${prefix}status`, `status must be one of: ${LIFECYCLE_STATUSES.join(', ')}.`, 'invalid_choice');
  const page = parseFunnelActorsPage(outer ?? {});
  if (page.search !== null) throw new QueryFilterError('query__search', 'search is not served for lifecycle actors.', 'not_supported');
  return { lifecycle, day: day as string | null, status: status as LifecycleStatus | null, page };
}

async function runLifecycleActors(
  stores: { ch: ClickHouseClient; db: Sql },
  project: QueryProject,
  query: LifecycleActorsQuery,
  nowMs: number,
  ports: QueryPorts,
): Promise<FunnelActorsResult> {
  const { lifecycle, page } = query;
  const { range, builder } = await lifecycleSql(project, lifecycle, nowMs, ports);
  // The interval holding `day` (PostHog: date_to_start_of_interval(toDateTime(day))), as days[i] writes it.
  const day =
    query.day === null
      ? null
      : formatBucketDay(
          startOfInterval(DateTime.fromISO(query.day.replace(' ', 'T'), { zone: range.timezone }), range.interval, range.weekStartDay),
          range.interval,
        );
  const { sql, params } = builder.actorsSql({ day, status: query.status, limit: page.limit, offset: page.offset });
  const found = (await queryClickhouse<{ actor_id: string }>(stores.ch, { kind: 'lifecycle.actors', teamId: project.id, sql, params })).map((r) => r.actor_id);
  const groupIndex = lifecycle.aggregation_group_type_index;
  return actorsOfPage(stores.db, project.id, groupIndex, actorColumns(page, groupIndex), found, page);
}

/** The persons (or groups) of one lifecycle bar; pages are not cached. */
export const lifecycleActorsRunner: QueryRunner<LifecycleActorsQuery, FunnelActorsResult> = {
  label: 'lifecycle_actors',
  parseLegacy: (input) => parseLifecycleActors(input, null),
  references: ({ lifecycle }) => ({
    series: lifecycle.series,
    properties: lifecycle.properties,
    breakdowns: [],
    filterTestAccounts: lifecycle.filter_test_accounts,
  }),
  calculate: ({ ch, db, project, ports, nowMs }, query) => runLifecycleActors({ ch, db }, project, query, nowMs, ports),
  queryApi: {
    insightActorsOf: 'LifecycleQuery',
    parse: (node, outer) => parseLifecycleActors(node, outer),
    actorsSource: true,
    response: actorsQueryResponse,
  },
};
