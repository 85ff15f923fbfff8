import { EVENTS_TABLE, queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import { compilePropertyGroup, eventsTablePropertiesColumn, QueryParams, type PropertyGroup } from '@sightline/properties';

/** Which events of a project a list shows, newest first. */
export interface EventsListQuery {
  teamId: number;
  nowMs: number;
  event?: string | null;
  distinctId?: string | null;
  /** Events of any of these distinct ids (a person's); an empty list matches nothing. */
  distinctIds?: readonly string[] | null;
  /** Event and person property filters, read from the event row as it was written. */
  properties?: PropertyGroup;
  /** Only events at or after / before these instants (epoch ms). */
  afterMs?: number | null;
  beforeMs?: number | null;
  /** Where the previous page ended (exclusive). */
  cursor?: EventsCursor | null;
  limit: number;
}

/** A position in the newest-first order: (timestamp, uuid) is a total order, so pages never overlap or skip. */
export interface EventsCursor {
  /** The event's timestamp as ClickHouse writes it (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC). */
  timestamp: string;
  uuid: string;
}

export interface EventsListRow {
  uuid: string;
  event: string;
  distinctId: string;
  properties: Record<string, unknown>;
  elementsChain: string;
  /** ISO 8601, UTC. */
  timestamp: string;
  personId: string;
  cursor: EventsCursor;
}

/**
 * One page of a project's events, newest first, and whether more follow. Reads FINAL so an event
 * delivered twice (same uuid) is listed once. Every value is a bound parameter.
 */
export async function listEvents(ch: ClickHouseClient, query: EventsListQuery): Promise<{ rows: EventsListRow[]; hasMore: boolean }> {
  const params = new QueryParams();
  const where = [`team_id = ${params.add(query.teamId, 'Int64')}`];
  if (query.event) where.push(`event = ${params.add(query.event, 'String')}`);
  if (query.distinctId) where.push(`distinct_id = ${params.add(query.distinctId, 'String')}`);
  if (query.distinctIds) where.push(`distinct_id IN ${params.add(query.distinctIds, 'Array(String)')}`);
  if (query.afterMs != null) where.push(`timestamp >= toDateTime64(${params.add(query.afterMs / 1000, 'Float64')}, 6, 'UTC')`);
  if (query.beforeMs != null) where.push(`timestamp < toDateTime64(${params.add(query.beforeMs / 1000, 'Float64')}, 6, 'UTC')`);
  if (query.cursor) {
    const at = `toDateTime64(${params.add(query.cursor.timestamp, 'String')}, 6, 'UTC')`;
    where.push(`(timestamp < ${at} OR (timestamp = ${at} AND uuid < toUUID(${params.add(query.cursor.uuid, 'String')})))`);
  }
  if (query.properties && query.properties.values.length > 0) {
    where.push(compilePropertyGroup(query.properties, { params, nowMs: query.nowMs, propertiesColumn: eventsTablePropertiesColumn }));
  }
  const limit = params.add(query.limit + 1, 'UInt32');
  const rows = await queryClickhouse<{
    event_uuid: string;
    event: string;
    distinct_id: string;
    properties: string;
    elements_chain: string;
    ts: string;
    person_uuid: string;
  }>(ch, {
    kind: 'events.list',
    teamId: query.teamId,
    sql: `SELECT toString(uuid) AS event_uuid, event, distinct_id, properties, elements_chain, toString(timestamp) AS ts, toString(person_id) AS person_uuid
               -- Aliases differ from the columns: the WHERE and ORDER BY compare the UUID column itself.
              FROM ${EVENTS_TABLE} FINAL
             WHERE ${where.join(' AND ')}
             ORDER BY timestamp DESC, uuid DESC
             LIMIT ${limit}`,
    params: params.values,
  });
  const page = rows.slice(0, query.limit);
  return {
    hasMore: rows.length > query.limit,
    rows: page.map((row) => ({
      uuid: row.event_uuid,
      event: row.event,
      distinctId: row.distinct_id,
      properties: parseProperties(row.properties),
      elementsChain: row.elements_chain,
      timestamp: `${row.ts.replace(' ', 'T')}Z`,
      personId: row.person_uuid,
      cursor: { timestamp: row.ts, uuid: row.event_uuid },
    })),
  };
}

function parseProperties(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
