import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import type { PropertyGroup } from '@sightline/properties';
import { resolveQueryDateRange, type QueryDateRange } from '../common/date-range';
import type { QueryPorts, QuerySqlPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import type { ParsedPathsFilter } from './paths-filter';
import { PathsSqlBuilder } from './paths.sql';

/** One edge of the paths answer (PostHog's PathsLink); `average_conversion_time` in milliseconds. */
export interface PathsLink {
  source: string;
  target: string;
  value: number;
  average_conversion_time: number;
}

export interface PathsResult {
  result: PathsLink[];
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
}

/**
 * The range and filters of a paths query: PostHog's QueryDateRange with no interval (a day's:
 * date_from at the start of its day, default seven days back; date_to at the end of its day), and
 * the project's test-account filters when asked.
 */
export async function pathsRangeAndFilters(
  project: QueryProject,
  filter: ParsedPathsFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<{ range: QueryDateRange; properties: PropertyGroup }> {
  const earliest = filter.date_from === 'all' ? await ports.earliestEventMs() : null;
  const range = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    // A day's range (PostHog's interval None): the bounds are a day's, whatever the interval;
    // months only so a long range is not refused for holding thousands of day buckets it never uses.
    interval: 'month',
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
  return { range, properties };
}

/**
 * The edges reachable from a first step (`1_…`), in the order given (PostHog's validate_results):
 * the edge limit can cut an edge's way from the start, and an edge no path from a start reaches
 * would float loose in the diagram.
 */
export function reachableEdges<T extends { source: string; target: string }>(edges: T[]): T[] {
  const next = new Map<string, string[]>();
  const stack: string[] = [];
  for (const edge of edges) {
    next.set(edge.source, [...(next.get(edge.source) ?? []), edge.target]);
    if (edge.source.startsWith('1_')) stack.push(edge.source);
  }
  const seen = new Set<string>();
  while (stack.length) {
    const node = stack.pop()!;
    seen.add(node);
    for (const target of next.get(node) ?? []) if (!seen.has(target)) stack.push(target);
  }
  return edges.filter((edge) => seen.has(edge.source));
}

/** Runs a checked paths query for one project: PostHog's PathsQueryResponse results. */
export async function runPathsQuery(
  ch: ClickHouseClient,
  project: QueryProject,
  filter: ParsedPathsFilter,
  nowMs: number,
  ports: QueryPorts,
): Promise<PathsResult> {
  const { range, properties } = await pathsRangeAndFilters(project, filter, nowMs, ports);
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  const builder = new PathsSqlBuilder({ filter, properties, range }, sqlPorts);
  const sql = builder.edgesSql();
  const rows = await queryClickhouse<{ source: string; target: string; value: string | number; average_conversion_time: number }>(ch, {
    kind: 'paths',
    teamId: project.id,
    sql,
    params: builder.params.values,
  });
  const result = reachableEdges(
    rows.map((r) => ({
      source: r.source,
      target: r.target,
      value: Number(r.value),
      average_conversion_time: Number(r.average_conversion_time) * 1000,
    })),
  );
  return { result, timezone: project.timezone, is_cached: false, last_refresh: new Date(nowMs).toISOString() };
}
