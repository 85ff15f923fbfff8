import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import type { PropertyGroup } from '@sightline/properties';
import { formatBucketDay, formatBucketLabel, isoDateTime, resolveQueryDateRange, type QueryDateRange } from '../common/date-range';
import type { QueryPorts, QuerySqlPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { LIFECYCLE_STATUSES, type LifecycleStatus, type ParsedLifecycleFilter } from './lifecycle-filter';
import { LifecycleSqlBuilder } from './lifecycle.sql';

/** One status of a lifecycle answer, as PostHog's LifecycleQueryRunner gives it. */
export interface LifecycleSeries {
  action: { id: string | null; name: string; type: 'events' | 'actions'; order: 0; math: 'total' };
  /** Actors per interval; dormant ones negative. */
  data: number[];
  count: number;
  labels: string[];
  days: string[];
  label: string;
  status: LifecycleStatus;
}

/** A lifecycle answer, in the envelope every insight kind shares, with the range it resolved to. */
export interface LifecycleResult {
  result: LifecycleSeries[];
  next: null;
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
  resolved_date_range: { date_from: string; date_to: string };
}

/** The range and filters a lifecycle reads, and its SQL builder. */
export async function lifecycleSql(
  project: QueryProject,
  filter: ParsedLifecycleFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<{ range: QueryDateRange; builder: LifecycleSqlBuilder }> {
  const earliest = filter.date_from === 'all' ? await ports.earliestEventMs() : null;
  const range = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    interval: filter.interval,
    timezone: project.timezone,
    weekStartDay: project.weekStartDay,
    nowMs,
    explicitDate: filter.explicit_date,
    earliestEventMs: earliest,
  });
  const properties: PropertyGroup = {
    type: 'AND',
    values: filter.filter_test_accounts ? [filter.properties, project.testAccountFilters] : [filter.properties],
  };
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  const builder = new LifecycleSqlBuilder(
    { series: filter.series, properties, range, aggregationGroupTypeIndex: filter.aggregation_group_type_index },
    sqlPorts,
  );
  return { range, builder };
}

/** Runs a checked lifecycle filter for one project: one query, four series (new, returning, resurrecting, dormant). */
export async function runLifecycleQuery(
  ch: ClickHouseClient,
  project: QueryProject,
  filter: ParsedLifecycleFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<LifecycleResult> {
  const { range, builder } = await lifecycleSql(project, filter, nowMs, ports);
  const { sql, params } = builder.countsSql();
  const rows = await queryClickhouse<{ start_of_period: string; status: LifecycleStatus; actors: string | number }>(ch, {
    kind: 'lifecycle',
    teamId: project.id,
    sql,
    params,
  });
  const days = range.buckets.map((b) => formatBucketDay(b, range.interval));
  const labels = range.buckets.map((b) => formatBucketLabel(b, range));
  const index = new Map(days.map((day, i) => [day, i]));
  const first = filter.series[0]!;
  const action: LifecycleSeries['action'] =
    first.kind === 'actions'
      ? { id: String(first.id), name: ports.actionName(Number(first.id)), type: 'actions', order: 0, math: 'total' }
      : { id: first.id as string | null, name: (first.id as string | null) ?? 'All events', type: 'events', order: 0, math: 'total' };
  const result = LIFECYCLE_STATUSES.map((status): LifecycleSeries => {
    const data = days.map(() => 0);
    for (const row of rows) {
      const i = row.status === status ? index.get(row.start_of_period) : undefined;
      if (i !== undefined) data[i] = (status === 'dormant' ? -1 : 1) * Number(row.actors);
    }
    return { action, data, count: data.reduce((a, b) => a + b, 0), labels, days, label: `${action.name} - ${status}`, status };
  });
  return {
    result,
    next: null,
    timezone: project.timezone,
    is_cached: false,
    last_refresh: new Date(nowMs).toISOString(),
    resolved_date_range: { date_from: isoDateTime(range.from), date_to: isoDateTime(range.to) },
  };
}
