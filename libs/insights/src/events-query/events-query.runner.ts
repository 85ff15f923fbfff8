import { queryClickhouse } from '@sightline/clickhouse';
import { findPersonByRef, findPersonsByDistinctIds } from '@sightline/persons';
import { DateTime } from 'luxon';
import { chainToElements } from '../funnels/chain-elements';
import { parseQueryDate } from '../common/date-range';
import { dateTimeInZone } from '../common/date-time-values';
import type { QueryContext, QueryRunner } from '../runners/query-runner';
import { columnName, MAX_PERSON_DISTINCT_IDS, orderExpression, parseEventsQueryNode, type EventsQuery } from './events-query-node';
import { EventsQuerySql, STAR_FIELDS, type EventsColumnKind, type EventsQueryWindow } from './events-query.sql';

/** PostHog's EventsQueryResponse: rows (one array per row), their columns and ClickHouse types, and the page. */
export interface EventsQueryAnswer {
  columns: string[];
  types: string[];
  results: unknown[][];
  hasMore: boolean;
  limit: number;
  offset: number;
  /** The query as HogQL. */
  hogql: string;
}

/** How far past now `before` reaches when absent: events a few seconds ahead of this server's clock still show (PostHog's default). */
const DEFAULT_BEFORE_MS = 5_000;

/** The window of an EventsQuery: `after` -24h and `before` now + 5 s when absent, as PostHog's runner reads them. */
export function eventsQueryWindow(query: EventsQuery, timezone: string, nowMs: number): EventsQueryWindow {
  const now = DateTime.fromMillis(nowMs, { zone: timezone });
  const after = query.after ?? '-24h';
  return {
    afterMs: after === 'all' ? null : parseQueryDate(after, now, 'after').at.toMillis(),
    beforeMs: query.before === null ? nowMs + DEFAULT_BEFORE_MS : parseQueryDate(query.before, now, 'before').at.toMillis(),
  };
}

/** The JSON of a properties column; text that is not an object reads as none. */
function jsonObject(text: unknown): Record<string, unknown> {
  try {
    const value = JSON.parse(String(text)) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A `*` column: the event as an object, its properties parsed and its elements read from the chain. */
function starObject(tuple: unknown, timezone: string): Record<string, unknown> {
  const values = Array.isArray(tuple) ? tuple : [];
  const event: Record<string, unknown> = Object.fromEntries(STAR_FIELDS.map((field, i) => [field, values[i]]));
  event['properties'] = jsonObject(event['properties']);
  event['timestamp'] = dateTimeInZone(event['timestamp'], "DateTime64(6, 'UTC')", timezone);
  event['created_at'] = dateTimeInZone(event['created_at'], "DateTime64(6, 'UTC')", timezone);
  if (typeof event['elements_chain'] === 'string' && event['elements_chain'] !== '') event['elements'] = chainToElements(event['elements_chain']);
  return event;
}

/** The rows as the answer gives them: expanded columns built, date-times in the project's zone, persons looked up. */
async function answerRows(context: QueryContext, kinds: EventsColumnKind[], types: string[], rows: unknown[][]): Promise<unknown[][]> {
  const timezone = context.project.timezone;
  const personColumns = kinds.flatMap((kind, i) => (kind === 'person' ? [i] : []));
  const distinctIds = personColumns.length > 0 ? rows.map((row) => String(row[personColumns[0]!])) : [];
  const persons = distinctIds.length > 0 ? await findPersonsByDistinctIds(context.db, context.project.id, distinctIds) : new Map();
  return rows.map((row) =>
    row.map((value, i) => {
      switch (kinds[i]) {
        case 'star':
          return starObject(value, timezone);
        case 'person': {
          // PostHog's person column: the person behind the distinct id now (after merges), or the distinct id alone.
          const distinctId = String(value);
          const person = persons.get(distinctId);
          return person
            ? { uuid: person.uuid, created_at: person.createdAt, properties: person.properties, distinct_id: distinctId }
            : { distinct_id: distinctId };
        }
        case 'person_display_name': {
          const [displayName, id, distinctId] = Array.isArray(value) ? value : [];
          return { display_name: displayName, id: String(id), distinct_id: String(distinctId) };
        }
        default:
          return dateTimeInZone(value, types[i] ?? '', timezone);
      }
    }),
  );
}

/** The query as HogQL, for the answer's `hogql` (what PostHog's runner prints before its own compiler). */
function hogqlText(query: EventsQuery): string {
  const where = query.where.length > 0 ? ` WHERE ${query.where.map((w) => `(${w})`).join(' AND ')}` : '';
  const order = query.orderBy && query.orderBy.length > 0 ? ` ORDER BY ${query.orderBy.join(', ')}` : '';
  return `SELECT ${query.select.join(', ')} FROM events${where}${order} LIMIT ${query.limit + 1} OFFSET ${query.offset}`;
}

/** The columns' types when no row carries them: ClickHouse describes the statement without running it. */
async function describeTypes(context: QueryContext, statement: { sql: string; params: Record<string, unknown> }, width: number): Promise<string[]> {
  const described = await queryClickhouse<{ name: string; type: string }>(context.ch, {
    kind: 'events_query.describe',
    teamId: context.project.id,
    sql: `DESCRIBE TABLE (${statement.sql})`,
    params: statement.params,
  });
  const byName = new Map(described.map((column) => [column.name, column.type]));
  return Array.from({ length: width }, (_, i) => byName.get(`c${i}`) ?? '');
}

async function calculate(context: QueryContext, query: EventsQuery): Promise<EventsQueryAnswer> {
  const { project, ports, nowMs, ch, db } = context;
  const window = eventsQueryWindow(query, project.timezone, nowMs);
  let personDistinctIds: string[] | null = null;
  if (query.personId !== null) {
    const ref = /^\d{1,18}$/.test(query.personId) ? { id: query.personId } : { uuid: query.personId };
    // A person of another project, or none, names no distinct id: no events.
    personDistinctIds = ((await findPersonByRef(db, project.id, ref))?.distinctIds ?? []).slice(0, MAX_PERSON_DISTINCT_IDS);
  }
  const statement = new EventsQuerySql(query, window, personDistinctIds, project, { ...ports, teamId: project.id, nowMs }, project.timezone).build();
  const rows = await queryClickhouse<Record<string, unknown>>(ch, {
    kind: 'events_query',
    teamId: project.id,
    sql: statement.sql,
    params: statement.params,
    // Integers as JSON numbers, as PostHog answers them (past 2^53 they round, as a float would).
    settings: { output_format_json_quote_64bit_integers: 0 },
  });
  const page = rows.slice(0, query.limit);
  const width = statement.columns.length;
  const types = rows.length > 0 ? Array.from({ length: width }, (_, i) => String(rows[0]![`t${i}`])) : await describeTypes(context, statement, width);
  const values = page.map((row) => Array.from({ length: width }, (_, i) => row[`c${i}`] ?? null));
  return {
    columns: query.select.map((text) => (text.trim() === '*' ? '*' : text)),
    types,
    results: await answerRows(context, statement.columns, types, values),
    hasMore: rows.length > query.limit,
    limit: query.limit,
    offset: query.offset,
    hogql: hogqlText(query),
  };
}

/**
 * EventsQuery (PostHog's EventsQueryRunner, posthog/hogql_queries/events_query_runner.py): a page
 * of events, or of aggregates over them, as rows of the columns asked for. Only on the query API.
 * Not cached: its default window moves with the clock (the Events page asks every few seconds).
 */
export const eventsQueryRunner: QueryRunner<EventsQuery, EventsQueryAnswer> = {
  label: 'events_query',
  parseLegacy: (input) => parseEventsQueryNode(input),
  references: (query) => ({
    series: query.actionId === null ? [] : [{ kind: 'actions', id: query.actionId, properties: { type: 'AND', values: [] } }],
    properties: { type: 'AND', values: [query.properties, query.fixedProperties] },
    breakdowns: [],
    hogql: [
      ...query.select.filter((text) => !isExpandedColumn(text)).map((text) => ({ text, attr: 'select' })),
      ...query.where.map((text) => ({ text, attr: 'where' })),
      ...(query.orderBy ?? [])
        .map((text) => orderExpression(text).expression)
        .filter((text) => !isExpandedColumn(text))
        .map((text) => ({ text, attr: 'orderBy' })),
    ],
    filterTestAccounts: query.filterTestAccounts,
  }),
  calculate,
  queryApi: {
    parse: (node) => parseEventsQueryNode(node),
    response: (answer) => ({ ...answer, timings: [], modifiers: {} }),
  },
};

/** Columns the runner builds itself rather than parse as HogQL. */
function isExpandedColumn(text: string): boolean {
  const name = columnName(text);
  return text.trim() === '*' || name === 'person' || name === 'person_display_name';
}
