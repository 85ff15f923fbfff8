import type { PropertyGroup } from '@sightline/properties';
import { optionalBoolean, optionalInteger, optionalString, propertyGroup } from '../common/filter-fields';
import { QueryFilterError } from '../common/query-filter-error';

/**
 * Rows an EventsQuery answers: 100 when no limit is asked, at most 50,000
 * (DEFAULT_RETURNED_ROWS and MAX_SELECT_RETURNED_ROWS of posthog/hogql/constants.py; a larger
 * limit is cut to the maximum, as HogQLHasMorePaginator.from_limit_context does).
 */
export const EVENTS_QUERY_DEFAULT_LIMIT = 100;
export const EVENTS_QUERY_MAX_LIMIT = 50_000;
/** The most expressions each list (select, where, orderBy) may hold. */
export const EVENTS_QUERY_MAX_EXPRESSIONS = 100;
/** The most distinct ids of one person a `personId` filter reads (MAX_LIMIT_DISTINCT_IDS, posthog/models/person/person.py). */
export const MAX_PERSON_DISTINCT_IDS = 2_500;

/** An EventsQuery node (PostHog's schema, EventsQuery in frontend/src/queries/schema), checked. */
export interface EventsQuery {
  /** Column expressions as sent (`*`, `person`, `person_display_name`, or HogQL); `*` when none. */
  select: string[];
  /** HogQL conditions, all of which must hold. */
  where: string[];
  properties: PropertyGroup;
  fixedProperties: PropertyGroup;
  /** Event names (`event` and `events`); empty: any event. */
  events: string[];
  actionId: number | null;
  /** A person's uuid or integer id: only events of its distinct ids. */
  personId: string | null;
  /** Dates as PostHog reads them (relative or absolute); null: `after` is -24h, `before` now + 5 s. `after: "all"`: no lower bound. */
  after: string | null;
  before: string | null;
  /** `expression [ASC|DESC]`; null: PostHog's default order. */
  orderBy: string[] | null;
  limit: number;
  offset: number;
  filterTestAccounts: boolean;
}

function expressionList(node: Record<string, unknown>, key: string): string[] | null {
  const value = node[key];
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new QueryFilterError(key, `${key} must be a list of HogQL expressions.`, 'not_a_list');
  if (value.length > EVENTS_QUERY_MAX_EXPRESSIONS)
    throw new QueryFilterError(key, `${key} may hold at most ${EVENTS_QUERY_MAX_EXPRESSIONS} expressions.`, 'max_length');
  return value.map((item, i) => {
    if (typeof item !== 'string' || item.trim() === '') throw new QueryFilterError(`${key}__${i}`, `Each ${key} entry must be a non-empty string.`, 'invalid');
    return item;
  });
}

/** The text of a column before its `-- comment` (PostHog names special columns this way: `person_display_name -- Person`). */
export const columnName = (text: string) => text.split('--')[0]!.trim();

const DIRECTION = /\s+(ASC|DESC)\s*$/i;

/** An orderBy entry: its expression and direction (ASC when not written), as PostHog's parse_order_expr reads it. */
export function orderExpression(text: string): { expression: string; direction: 'ASC' | 'DESC' } {
  const direction = DIRECTION.exec(text)?.[1]?.toUpperCase() === 'DESC' ? 'DESC' : 'ASC';
  return { expression: text.replace(DIRECTION, ''), direction };
}

/** An EventsQuery node as the runner reads it; anything wrong is a 400 naming the field. */
export function parseEventsQueryNode(node: Record<string, unknown>): EventsQuery {
  const select = expressionList(node, 'select') ?? [];
  const events = [optionalString(node, 'event')];
  const listed = node['events'];
  if (listed !== undefined && listed !== null) {
    if (!Array.isArray(listed) || listed.some((e) => typeof e !== 'string'))
      throw new QueryFilterError('events', 'events must be a list of event names.', 'not_a_list');
    events.push(...(listed as string[]));
  }
  const personId = node['personId'] ?? null;
  if (personId !== null && typeof personId !== 'string' && typeof personId !== 'number')
    throw new QueryFilterError('personId', 'personId must be a person uuid or id.', 'invalid');
  if (node['source'] !== undefined && node['source'] !== null) {
    throw new QueryFilterError(
      'source',
      'An EventsQuery with a source (the events behind an insight) is not supported; send the events filters instead.',
      'not_supported',
    );
  }
  const asked = optionalInteger(node, 'limit', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const offset = optionalInteger(node, 'offset', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  return {
    select: select.length === 0 ? ['*'] : select,
    where: expressionList(node, 'where') ?? [],
    properties: propertyGroup(node['properties'] ?? [], 'properties'),
    fixedProperties: propertyGroup(node['fixedProperties'] ?? [], 'fixedProperties'),
    events: events.filter((e): e is string => e !== null && e !== ''),
    actionId: optionalInteger(node, 'actionId', 1, Number.MAX_SAFE_INTEGER),
    personId: personId === null ? null : String(personId),
    after: optionalString(node, 'after'),
    before: optionalString(node, 'before'),
    orderBy: expressionList(node, 'orderBy'),
    // As PostHog's paginator: a missing or non-positive limit is the default, a negative offset 0.
    limit: Math.min(EVENTS_QUERY_MAX_LIMIT, asked === null || asked <= 0 ? EVENTS_QUERY_DEFAULT_LIMIT : asked),
    offset: offset === null || offset < 0 ? 0 : offset,
    filterTestAccounts: optionalBoolean(node, 'filterTestAccounts'),
  };
}
