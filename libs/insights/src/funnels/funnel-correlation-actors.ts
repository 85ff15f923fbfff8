import type { ClickHouseClient } from '@clickhouse/client';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { parsePropertyFilters, type PropertyGroup } from '@sightline/properties';
import { TrendFilterError } from '../trends/trend-filter';
import type { TrendSqlPorts } from '../trends/trend-series.sql';
import type { TrendProject, TrendQueryPorts } from '../trends/trends.query';
import { actorColumns, actorsOfPage, parseFunnelActorsPage, type FunnelActorsPage, type FunnelActorsResult } from './funnel-actors';
import { CORRELATION_TYPES, funnelsQueryToFilter } from './funnel-correlation';
import { FunnelCorrelationSqlBuilder } from './funnel-correlation.sql';
import type { ParsedFunnelFilter } from './funnel-filter';
import { funnelRangeAndFilters } from './funnels.query';

/** The filter types a correlation row's event may carry (the web app sends the row's event property). */
const ENTITY_FILTER_TYPES = new Set(['event', 'person', 'element']);

/** Which actors of a correlation row are asked for (PostHog's FunnelCorrelationActorsQuery). */
export interface CorrelationActorsRequest {
  type: (typeof CORRELATION_TYPES)[number];
  /** true: converted actors; false: those who dropped off; null: both. */
  converted: boolean | null;
  /** Events and event-property correlation: the row's event and its filters. */
  event: { event: string; properties: PropertyGroup } | null;
}

/** A FunnelCorrelationActorsQuery read: the funnel (as a legacy filter body), the actors asked for and the page. */
export interface ParsedCorrelationActorsQuery {
  funnelBody: Record<string, unknown>;
  request: CorrelationActorsRequest;
  page: FunnelActorsPage;
}

const fail = (attr: string, message: string, code = 'invalid'): never => {
  throw new TrendFilterError(attr, message, code);
};

export function isFunnelCorrelationActorsQuery(node: unknown): node is Record<string, unknown> {
  return isJsonObject(node) && node['kind'] === 'FunnelCorrelationActorsQuery';
}

/**
 * `node` is the FunnelCorrelationActorsQuery; `actorsQuery` the ActorsQuery around it (its
 * `select`, `limit`, `offset`, `search`), or null when it was sent bare. Its source is a
 * FunnelCorrelationQuery whose source is a FunnelsActorsQuery around the FunnelsQuery. For a
 * property correlation, `funnelCorrelationPropertyValues` filter the funnel itself, as PostHog's
 * to_actors_query pushes them into the funnel's properties.
 */
export function parseCorrelationActorsQuery(node: Record<string, unknown>, actorsQuery: Record<string, unknown> | null): ParsedCorrelationActorsQuery {
  const attr = actorsQuery === null ? 'query' : 'query__source';
  const correlation = node['source'];
  if (!isJsonObject(correlation) || correlation['kind'] !== 'FunnelCorrelationQuery') {
    return fail(`${attr}__source`, 'A FunnelCorrelationActorsQuery needs its FunnelCorrelationQuery as source.', 'required');
  }
  const actorsSource = correlation['source'];
  const funnel = isJsonObject(actorsSource) && actorsSource['kind'] === 'FunnelsActorsQuery' ? actorsSource['source'] : null;
  if (!isJsonObject(funnel) || funnel['kind'] !== 'FunnelsQuery') {
    return fail(`${attr}__source__source`, 'A FunnelCorrelationQuery needs a FunnelsActorsQuery around a FunnelsQuery as source.', 'required');
  }
  const type = correlation['funnelCorrelationType'] ?? 'events';
  if (typeof type !== 'string' || !(CORRELATION_TYPES as readonly string[]).includes(type)) {
    fail(`${attr}__source__funnelCorrelationType`, `funnelCorrelationType must be one of: ${CORRELATION_TYPES.join(', ')}.`, 'invalid_choice');
  }
  const converted = node['funnelCorrelationPersonConverted'] ?? null;
  if (converted !== null && typeof converted !== 'boolean')
    fail(`${attr}__funnelCorrelationPersonConverted`, 'funnelCorrelationPersonConverted must be true, false or null.');
  const funnelBody = funnelsQueryToFilter(funnel);
  let event: CorrelationActorsRequest['event'] = null;
  if (type === 'properties') {
    const values = node['funnelCorrelationPropertyValues'];
    // PostHog: "Property Correlation expects atleast one Property to get persons for".
    if (!Array.isArray(values) || values.length === 0) {
      fail(`${attr}__funnelCorrelationPropertyValues`, 'Property correlation needs at least one property value to list actors for.', 'required');
    }
    funnelBody['properties'] = withPropertyValues(funnelBody['properties'], values as unknown[]);
  } else {
    const entity = node['funnelCorrelationPersonEntity'];
    const entityAttr = `${attr}__funnelCorrelationPersonEntity`;
    if (!isJsonObject(entity)) return fail(entityAttr, 'No entity for persons specified (funnelCorrelationPersonEntity).', 'required');
    if (entity['kind'] !== undefined && entity['kind'] !== 'EventsNode') fail(entityAttr, 'funnelCorrelationPersonEntity must be an EventsNode.');
    const name = entity['event'];
    if (typeof name !== 'string' || name === '' || name.length > 400)
      return fail(entityAttr, 'funnelCorrelationPersonEntity needs its event name.', 'required');
    event = { event: name, properties: parsePropertyFilters(entity['properties'], `${entityAttr}__properties`, { types: ENTITY_FILTER_TYPES }) };
  }
  return {
    funnelBody,
    request: { type: type as CorrelationActorsRequest['type'], converted: converted as boolean | null, event },
    page: parseFunnelActorsPage(actorsQuery ?? {}),
  };
}

/** The funnel's properties (a list or a group) with the property values ANDed on. */
function withPropertyValues(properties: unknown, values: unknown[]): unknown {
  const empty = properties === undefined || properties === null || (Array.isArray(properties) && properties.length === 0);
  if (empty) return values;
  const group = Array.isArray(properties) ? { type: 'AND', values: properties } : properties;
  return { type: 'AND', values: [group, { type: 'AND', values }] };
}

/**
 * A page of the actors behind a correlation row, from the same per-actor funnel outcome and
 * windowed events the correlation counts (PostHog's funnel_correlation_query_runner.py
 * to_actors_query): every actor a row's success (or failure) count holds is listed, and no other.
 */
export async function runCorrelationActorsQuery(
  stores: { ch: ClickHouseClient; db: Sql },
  project: TrendProject,
  filter: ParsedFunnelFilter,
  request: CorrelationActorsRequest,
  page: FunnelActorsPage,
  nowMs: number,
  ports: TrendQueryPorts,
): Promise<FunnelActorsResult> {
  const groupIndex = filter.aggregation_group_type_index;
  const columns = actorColumns(page, groupIndex);
  if (filter.steps.length < 2) return actorsOfPage(stores.db, project.id, groupIndex, columns, [], page);
  const { range, properties } = await funnelRangeAndFilters(project, filter, nowMs, ports);
  const sqlPorts: TrendSqlPorts = { ...ports, teamId: project.id, nowMs };
  // The events of the steps, and of the steps of the actions that are steps, are never correlated.
  const stepEvents = filter.steps.flatMap((s) => (s.kind === 'actions' ? (ports.actionEventNames?.(Number(s.id)) ?? []) : s.id !== null ? [String(s.id)] : []));
  const builder = new FunnelCorrelationSqlBuilder({ filter: { ...filter, breakdowns: [] }, properties, range, cohortId: null }, sqlPorts);
  const sql = builder.correlationActorsSql({ converted: request.converted, event: request.event, stepEvents, limit: page.limit, offset: page.offset });
  const found = await stores.ch
    .query({ query: sql, query_params: builder.params.values, format: 'JSONEachRow' })
    .then((r) => r.json<{ actor_id: string }>())
    .then((rows) => rows.map((r) => r.actor_id));
  return actorsOfPage(stores.db, project.id, groupIndex, columns, found, page);
}
