import type { ClickHouseClient } from '@clickhouse/client';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { parsePropertyFilters, type PropertyGroup } from '@sightline/properties';
import { actorColumns, actorsOfPage, parseFunnelActorsPage, type FunnelActorsPage, type FunnelActorsResult } from './funnel-actors';
import { CORRELATION_TYPES } from './funnel-correlation';
import { FunnelCorrelationSqlBuilder } from './funnel-correlation.sql';
import type { ParsedFunnelFilter } from './funnel-filter';
import { funnelRangeAndFilters, rows } from './funnels.query';
import { QueryFilterError } from '../common/query-filter-error';
import { type QuerySqlPorts, type QueryPorts } from '../common/query-ports';
import { type QueryProject } from '../common/query-project';
import { funnelsQueryToFilter } from './funnels-query-node';

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
  throw new QueryFilterError(attr, message, code);
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
  const fields = readCorrelationActors(
    {
      type: correlation['funnelCorrelationType'],
      converted: node['funnelCorrelationPersonConverted'],
      entity: node['funnelCorrelationPersonEntity'],
      propertyValues: node['funnelCorrelationPropertyValues'],
    },
    {
      type: `${attr}__source__funnelCorrelationType`,
      converted: `${attr}__funnelCorrelationPersonConverted`,
      entity: `${attr}__funnelCorrelationPersonEntity`,
      propertyValues: `${attr}__funnelCorrelationPropertyValues`,
    },
    funnelsQueryToFilter(funnel),
  );
  return { ...fields, page: parseFunnelActorsPage(actorsQuery ?? {}) };
}

/** A legacy query-string value that holds JSON (an object or a list), parsed; anything else as is. */
function legacyJson(value: unknown, attr: string): unknown {
  if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return fail(attr, `${attr} is not valid JSON.`, 'parse_error');
  }
}

/** A query-string integer as a number (anything else as is, for the page parser to refuse). */
const legacyInteger = (value: unknown): unknown => (typeof value === 'string' && /^\s*-?\d{1,15}\s*$/.test(value) ? Number(value) : value);

/**
 * PostHog's legacy `persons/funnel/correlation/` (ee/clickhouse/views/person.py
 * `funnel_correlation`): the funnel filter plus `funnel_correlation_type`,
 * `funnel_correlation_person_entity` (`{"id": <event>, "type": "events", "properties"}`),
 * `funnel_correlation_person_converted` ("true"/"false" in any case; absent: both),
 * `funnel_correlation_property_values`, and `funnel_correlation_person_limit` (default 100) /
 * `funnel_correlation_person_offset`.
 */
export function parseLegacyCorrelationActors(input: Record<string, unknown>): ParsedCorrelationActorsQuery {
  const rawConverted = input['funnel_correlation_person_converted'];
  const converted = typeof rawConverted === 'string' ? (rawConverted.trim() === '' ? null : rawConverted.toLowerCase()) : rawConverted;
  const entity = legacyJson(input['funnel_correlation_person_entity'], 'funnel_correlation_person_entity');
  if (isJsonObject(entity) && entity['type'] !== undefined && entity['type'] !== 'events') {
    fail('funnel_correlation_person_entity', 'Only an event (type "events") has correlation actors.', 'not_supported');
  }
  const fields = readCorrelationActors(
    {
      type: input['funnel_correlation_type'],
      converted: converted === 'true' ? true : converted === 'false' ? false : converted,
      entity: isJsonObject(entity) ? { event: entity['id'], properties: entity['properties'] } : entity,
      propertyValues: legacyJson(input['funnel_correlation_property_values'], 'funnel_correlation_property_values'),
    },
    {
      type: 'funnel_correlation_type',
      converted: 'funnel_correlation_person_converted',
      entity: 'funnel_correlation_person_entity',
      propertyValues: 'funnel_correlation_property_values',
    },
    { ...input },
  );
  const page = parseFunnelActorsPage(
    { limit: legacyInteger(input['funnel_correlation_person_limit']), offset: legacyInteger(input['funnel_correlation_person_offset']) },
    'funnel_correlation_person_',
  );
  return { ...fields, page: { ...page, select: ['actor'] } };
}

type Fields = Record<'type' | 'converted' | 'entity' | 'propertyValues', unknown>;

/** The correlation type, outcome, and entity or property values, each error naming the request's own field (`attrs`). */
function readCorrelationActors(
  fields: Fields,
  attrs: Record<keyof Fields, string>,
  funnelBody: Record<string, unknown>,
): Omit<ParsedCorrelationActorsQuery, 'page'> {
  const type = fields.type ?? 'events';
  if (typeof type !== 'string' || !(CORRELATION_TYPES as readonly string[]).includes(type)) {
    fail(attrs.type, `The correlation type must be one of: ${CORRELATION_TYPES.join(', ')}.`, 'invalid_choice');
  }
  const converted = fields.converted ?? null;
  if (converted !== null && typeof converted !== 'boolean') fail(attrs.converted, 'The converted flag must be true, false or null.');
  let event: CorrelationActorsRequest['event'] = null;
  if (type === 'properties') {
    const values = fields.propertyValues;
    // PostHog: "Property Correlation expects atleast one Property to get persons for".
    if (!Array.isArray(values) || values.length === 0) {
      fail(attrs.propertyValues, 'Property correlation needs at least one property value to list actors for.', 'required');
    }
    funnelBody['properties'] = withPropertyValues(legacyJson(funnelBody['properties'], 'properties'), values as unknown[]);
  } else {
    const entity = fields.entity;
    if (!isJsonObject(entity)) return fail(attrs.entity, 'No entity for persons specified.', 'required');
    if (entity['kind'] !== undefined && entity['kind'] !== 'EventsNode') fail(attrs.entity, 'The entity must be an EventsNode.');
    const name = entity['event'];
    if (typeof name !== 'string' || name === '' || name.length > 400) return fail(attrs.entity, 'The entity needs its event name.', 'required');
    event = {
      event: name,
      properties: parsePropertyFilters(legacyJson(entity['properties'], attrs.entity), `${attrs.entity}__properties`, { types: ENTITY_FILTER_TYPES }),
    };
  }
  return { funnelBody, request: { type: type as CorrelationActorsRequest['type'], converted: converted as boolean | null, event } };
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
  project: QueryProject,
  filter: ParsedFunnelFilter,
  request: CorrelationActorsRequest,
  page: FunnelActorsPage,
  nowMs: number,
  ports: QueryPorts,
): Promise<FunnelActorsResult> {
  const groupIndex = filter.aggregation_group_type_index;
  const columns = actorColumns(page, groupIndex);
  if (filter.steps.length < 2) return actorsOfPage(stores.db, project.id, groupIndex, columns, [], page);
  const { range, properties } = await funnelRangeAndFilters(project, filter, nowMs, ports);
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  // The events of the steps, and of the steps of the actions that are steps, are never correlated.
  const stepEvents = filter.steps.flatMap((s) => (s.kind === 'actions' ? (ports.actionEventNames?.(Number(s.id)) ?? []) : s.id !== null ? [String(s.id)] : []));
  const builder = new FunnelCorrelationSqlBuilder({ filter: { ...filter, breakdowns: [] }, properties, range, cohortId: null }, sqlPorts);
  const sql = builder.correlationActorsSql({
    converted: request.converted,
    event: request.event,
    stepEvents,
    search: page.search,
    limit: page.limit,
    offset: page.offset,
  });
  const found = (await rows<{ actor_id: string }>(stores.ch, sql, builder.params.values)).map((r) => r.actor_id);
  return actorsOfPage(stores.db, project.id, groupIndex, columns, found, page);
}
