import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import type { Sql } from '@sightline/postgres';
import type { QueryPorts, QuerySqlPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import { actorColumns, actorsOfPage, type FunnelActorsPage, type FunnelActorsResult } from '../funnels/funnel-actors';
import type { ParsedPathsFilter, PathsActorsKeys } from './paths-filter';
import { pathsRangeAndFilters } from './paths.query';
import { PathsSqlBuilder } from './paths.sql';

/** The persons of a paths query asked for: which edge (or drop-off) and which page. */
export interface PathsActorsQuery {
  paths: ParsedPathsFilter;
  keys: PathsActorsKeys;
  page: FunnelActorsPage;
}

/**
 * The persons on a paths edge (PostHog's PathsQueryRunner.to_actors_query), read from the same
 * per-person steps the edges are counted from: a page of them by person id, each read from
 * PostgreSQL as the funnel's actors are.
 */
export async function runPathsActorsQuery(
  stores: { ch: ClickHouseClient; db: Sql },
  project: QueryProject,
  query: PathsActorsQuery,
  nowMs: number,
  ports: QueryPorts,
): Promise<FunnelActorsResult> {
  const { range, properties } = await pathsRangeAndFilters(project, query.paths, nowMs, ports);
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  const builder = new PathsSqlBuilder({ filter: query.paths, properties, range }, sqlPorts);
  const sql = builder.actorIdsSql(query.keys, query.page);
  const found = (await queryClickhouse<{ actor_id: string }>(stores.ch, { kind: 'paths.actors', teamId: project.id, sql, params: builder.params.values })).map(
    (r) => r.actor_id,
  );
  return actorsOfPage(stores.db, project.id, null, actorColumns(query.page, null), found, query.page);
}
