import type { ClickHouseClient } from '@clickhouse/client';
import { queryClickhouse } from '@sightline/clickhouse';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { actorColumns, actorsOfPage, DEFAULT_FUNNEL_ACTORS_LIMIT, MAX_FUNNEL_ACTORS_LIMIT, type FunnelActorsResult } from '../funnels/funnel-actors';
import { QueryFilterError } from '../common/query-filter-error';
import type { QueryPorts } from '../common/query-ports';
import type { QueryProject } from '../common/query-project';
import type { ParsedRetentionFilter } from './retention-filter';
import { retentionRangeAndFilters } from './retention.query';
import { RetentionSqlBuilder } from './retention.sql';

/** The actor columns PostHog's ActorsQuery serves for persons and groups, as funnel actors answer them. */
const ACTOR_COLUMNS = ['person', 'actor', 'group', 'id', 'key', 'person.$delete', 'created_at'] as const;
/** PostHog's retention actors order (ActorsQuery over an InsightActorsQuery of a RetentionQuery). */
const DEFAULT_ORDER = ['length(appearances) DESC', 'actor_id'];
const MAX_SEARCH_LENGTH = 200;

/** Which actors of a retention table: a start interval's cohort (of one breakdown value), a page of them. */
export interface RetentionActorsRequest {
  /** The start interval, from 0 (PostHog's InsightActorsQuery `interval`). */
  interval: number;
  /** A breakdown value's actors only (a list is joined with "::", as PostHog joins it). */
  breakdownValue: string | null;
  /** Only actors matching this text: a person's id, distinct id, email or name; a group's key or name. */
  search: string | null;
  /** The columns answered: actor columns, `appearances` (the offsets an actor is back in) and `<period>_<n>` (back in offset n). */
  select: string[] | null;
  limit: number;
  offset: number;
}

const fail = (attr: string, message: string, code = 'invalid'): never => {
  throw new QueryFilterError(attr, message, code);
};

function integer(node: Record<string, unknown>, key: string, attr: string, min: number, max: number): number | null {
  const value = node[key];
  if (value === undefined || value === null) return null;
  const n = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) return fail(attr, `${key} must be an integer between ${min} and ${max}.`);
  return n;
}

/**
 * An InsightActorsQuery over a RetentionQuery (its `interval`, or the RetentionQuery's
 * `retentionFilter.selectedInterval`, and `breakdown`), with the page of the ActorsQuery around it
 * (`select`, `search`, `limit` default 100 and at most 50,000, `offset`). Filtering the actors
 * by properties or another order is refused rather than ignored.
 */
export function parseRetentionActorsRequest(node: Record<string, unknown>, outer: Record<string, unknown> | null, prefix: string): RetentionActorsRequest {
  const source = isJsonObject(node['source']) ? node['source'] : {};
  const retention = isJsonObject(source['retentionFilter']) ? source['retentionFilter'] : {};
  const interval =
    integer(node, 'interval', `${prefix}interval`, 0, 100_000) ??
    integer(retention, 'selectedInterval', `${prefix}source__retentionFilter__selectedInterval`, 0, 100_000);
  if (interval === null) fail(`${prefix}interval`, 'The actors of a retention table need the start interval (interval).', 'required');
  const rawBreakdown = node['breakdown'];
  let breakdownValue: string | null = null;
  if (rawBreakdown !== undefined && rawBreakdown !== null) {
    const list = Array.isArray(rawBreakdown) ? rawBreakdown : [rawBreakdown];
    if (list.length > 10 || !list.every((v) => typeof v === 'string' || typeof v === 'number'))
      fail(`${prefix}breakdown`, 'breakdown must be a breakdown value: a text, a number or a list of them.');
    breakdownValue = list.map(String).join('::');
  }
  const page = outer ?? {};
  const rawSelect = page['select'];
  let select: string[] | null = null;
  if (rawSelect !== undefined && rawSelect !== null) {
    if (!Array.isArray(rawSelect) || rawSelect.length > 200 || !rawSelect.every((c) => typeof c === 'string'))
      fail('query__select', 'select must be a list of columns.');
    for (const column of rawSelect as string[]) {
      if (!(ACTOR_COLUMNS as readonly string[]).includes(column) && column !== 'appearances' && !/^(hour|day|week|month)_\d{1,4}$/.test(column)) {
        fail(
          'query__select',
          `Column ${JSON.stringify(column).slice(0, 60)} is not served for retention actors (actor columns, appearances, <period>_<n>).`,
          'not_supported',
        );
      }
    }
    select = (rawSelect as string[]).length > 0 ? (rawSelect as string[]) : null;
  }
  const orderBy = page['orderBy'];
  if (
    orderBy !== undefined &&
    orderBy !== null &&
    !(Array.isArray(orderBy) && (orderBy.length === 0 || JSON.stringify(orderBy) === JSON.stringify(DEFAULT_ORDER)))
  ) {
    fail('query__orderBy', `Retention actors are ordered by ${DEFAULT_ORDER.join(', ')} only.`, 'not_supported');
  }
  const rawSearch = page['search'];
  if (rawSearch !== undefined && rawSearch !== null && (typeof rawSearch !== 'string' || rawSearch.length > MAX_SEARCH_LENGTH)) {
    fail('query__search', `search must be a text of at most ${MAX_SEARCH_LENGTH} characters.`);
  }
  const search = typeof rawSearch === 'string' && rawSearch.trim() !== '' ? rawSearch.trim() : null;
  for (const key of ['properties', 'fixedProperties']) {
    const value = page[key];
    const empty = value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
    if (!empty) fail(`query__${key}`, `${key} is not served for retention actors.`, 'not_supported');
  }
  const limit = integer(page, 'limit', 'query__limit', 1, Number.MAX_SAFE_INTEGER);
  const offset = integer(page, 'offset', 'query__offset', 0, 1e9);
  return {
    interval: interval!,
    breakdownValue,
    search,
    select,
    limit: Math.min(limit ?? DEFAULT_FUNNEL_ACTORS_LIMIT, MAX_FUNNEL_ACTORS_LIMIT),
    offset: offset ?? 0,
  };
}

/**
 * A page of the actors of one retention row: the actors the row's first cell counts, read from the
 * same per-actor intervals the counts come from, each with the offsets it is back in.
 */
export async function runRetentionActorsQuery(
  stores: { ch: ClickHouseClient; db: Sql },
  project: QueryProject,
  filter: ParsedRetentionFilter,
  request: RetentionActorsRequest,
  nowMs: number,
  ports: QueryPorts,
): Promise<FunnelActorsResult> {
  const { range, properties } = await retentionRangeAndFilters(project, filter, nowMs, ports);
  const groupIndex = filter.aggregation_group_type_index;
  const builder = new RetentionSqlBuilder({ filter, range, properties }, { ...ports, teamId: project.id, nowMs });
  const found = await queryClickhouse<{ actor_id: string; appearances: (string | number)[] }>(stores.ch, {
    kind: 'retention.actors',
    teamId: project.id,
    sql: builder.actorsSql({
      startIndex: request.interval,
      breakdownValue: request.breakdownValue,
      search: request.search,
      limit: request.limit,
      offset: request.offset,
    }),
    params: builder.params.values,
  });
  const page = { select: null, search: null, limit: request.limit, offset: request.offset };
  const columns = request.select ?? actorColumns(page, groupIndex);
  const actorColumnsAsked = columns.filter((c) => (ACTOR_COLUMNS as readonly string[]).includes(c));
  const actors = await actorsOfPage(
    stores.db,
    project.id,
    groupIndex,
    actorColumnsAsked,
    found.map((r) => r.actor_id),
    page,
  );
  const period = range.interval;
  const rows = found.slice(0, request.limit).map((r, i) => {
    const appearances = r.appearances.map(Number);
    const actorRow = actors.results[i]!;
    return columns.map((column) => {
      const at = actorColumnsAsked.indexOf(column);
      if (at >= 0) return actorRow[at];
      if (column === 'appearances') return appearances;
      const n = Number(column.slice(period.length + 1));
      // `<period>_<n>` of another period than the query's names no interval: false, as an absent offset.
      return column.startsWith(`${period}_`) && appearances.includes(n) ? 1 : 0;
    });
  });
  return {
    ...actors,
    results: rows,
    columns,
    types: columns.map(
      (c, i) => (actorColumnsAsked.includes(c) ? actors.types[actorColumnsAsked.indexOf(c)]! : c === 'appearances' ? 'Array(Int64)' : 'UInt8') ?? String(i),
    ),
  };
}
