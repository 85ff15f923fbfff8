import { isJsonObject } from '@sightline/json-input';
import type { PropertyGroup } from '@sightline/properties';
import { optionalInteger, propertyGroup } from './filter-fields';
import { QueryFilterError } from './query-filter-error';

/**
 * Maths that count actors and count groups of `math_group_type_index` when it is given (PostHog's
 * `is_groups_math` in posthog/hogql_queries/insights/trends/utils.py): the actor is the event's
 * `$group_N`, and events without one are left out.
 */
export const GROUP_ACTOR_MATHS = ['dau', 'weekly_active', 'monthly_active', 'unique_group'] as const;

/** posthog/schema.py BaseMathType, PropertyMathType, CountPerActorMathType, plus unique_group and hogql. */
export const PROPERTY_MATHS = ['sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99'] as const;
export const COUNT_PER_ACTOR_MATHS = [
  'avg_count_per_actor',
  'min_count_per_actor',
  'max_count_per_actor',
  'median_count_per_actor',
  'p75_count_per_actor',
  'p90_count_per_actor',
  'p95_count_per_actor',
  'p99_count_per_actor',
] as const;
export const MATHS: ReadonlySet<string> = new Set([
  'total',
  'dau',
  'weekly_active',
  'monthly_active',
  'unique_session',
  'unique_group',
  'first_time_for_user',
  'first_matching_event_for_user',
  'hogql',
  ...PROPERTY_MATHS,
  ...COUNT_PER_ACTOR_MATHS,
]);

/**
 * The most series one query may have. PostHog's editor offers a few dozen; a cap keeps one
 * request from fanning out into thousands of ClickHouse queries.
 */
export const MAX_SERIES = 50;
export interface SeriesInput {
  kind: 'events' | 'actions';
  /** Event name (null: all events) or action id. */
  id: string | number | null;
  name: string | null;
  custom_name: string | null;
  order: number;
  math: string;
  math_property: string | null;
  math_property_type: string | null;
  math_hogql: string | null;
  math_group_type_index: number | null;
  properties: PropertyGroup;
  /** A funnel step the actor may skip (PostHog's `optionalInFunnel`); trends ignore it. */
  optionalInFunnel?: boolean;
}

/** One legacy entity (`events[i]` or `actions[i]`) as a series; `maths`: the maths it may have. */
export function parseSeries(raw: unknown, kind: 'events' | 'actions', index: number, maths: ReadonlySet<string>): SeriesInput {
  const attr = `${kind}__${index}`;
  if (!isJsonObject(raw)) throw new QueryFilterError(attr, 'Each series must be an object.', 'invalid');
  const id = raw['id'];
  let parsedId: string | number | null;
  if (kind === 'actions') {
    const n = typeof id === 'string' && /^\d{1,10}$/.test(id) ? Number(id) : id;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 2_147_483_647)
      throw new QueryFilterError(`${attr}__id`, 'An action series needs the action id.', 'invalid');
    parsedId = n;
  } else {
    if (id !== null && id !== undefined && typeof id !== 'string')
      throw new QueryFilterError(`${attr}__id`, 'An event series id must be the event name, or null for all events.', 'invalid');
    parsedId = id ?? null;
  }
  const text = (key: string) => {
    const value = raw[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') throw new QueryFilterError(`${attr}__${key}`, `${key} must be a string.`, 'invalid');
    return value;
  };
  const math = text('math') ?? 'total';
  if (!maths.has(math))
    throw new QueryFilterError(`${attr}__math`, `Unknown math "${math.slice(0, 100)}" (one of: ${[...maths].join(', ')}).`, 'invalid_choice');
  const series: SeriesInput = {
    kind,
    id: parsedId,
    name: text('name'),
    custom_name: text('custom_name'),
    order: typeof raw['order'] === 'number' && Number.isInteger(raw['order']) ? raw['order'] : Number.MAX_SAFE_INTEGER,
    math,
    math_property: text('math_property'),
    math_property_type: text('math_property_type'),
    math_hogql: text('math_hogql'),
    math_group_type_index: null,
    properties: propertyGroup(raw['properties'], `${attr}__properties`),
  };
  const optional = raw['optionalInFunnel'];
  if (optional !== undefined && optional !== null && typeof optional !== 'boolean')
    throw new QueryFilterError(`${attr}__optionalInFunnel`, 'optionalInFunnel must be true or false.', 'invalid');
  if (optional === true) series.optionalInFunnel = true;
  if ((PROPERTY_MATHS as readonly string[]).includes(math) && !series.math_property)
    throw new QueryFilterError(`${attr}__math_property`, `math "${math}" needs math_property.`, 'required');
  if (math === 'hogql' && !series.math_hogql) throw new QueryFilterError(`${attr}__math_hogql`, 'math "hogql" needs math_hogql.', 'required');
  if ((GROUP_ACTOR_MATHS as readonly string[]).includes(math)) {
    const index = optionalInteger(raw, 'math_group_type_index', 0, 4);
    if (index === null && math === 'unique_group')
      throw new QueryFilterError(`${attr}__math_group_type_index`, 'math "unique_group" needs math_group_type_index (0 to 4).', 'required');
    series.math_group_type_index = index;
  }
  return series;
}
