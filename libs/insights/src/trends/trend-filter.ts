import { isJsonObject } from '@sightline/json-input';
import { filtersOf, parsePropertyFilters, PropertyFilterError, type PropertyGroup } from '@sightline/properties';
import { INTERVALS, type Interval } from '../common/date-range';
import type { BreakdownInput } from '../common/events-sql';

export class TrendFilterError extends Error {
  constructor(
    readonly attr: string | null,
    message: string,
    readonly code = 'invalid_input',
  ) {
    super(message);
  }
}

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

/** ChartDisplayType; the total-value ones answer one number per series over the whole range. */
export const DISPLAYS: ReadonlySet<string> = new Set([
  'ActionsLineGraph',
  'ActionsLineGraphCumulative',
  'ActionsAreaGraph',
  'ActionsBar',
  'ActionsStackedBar',
  'ActionsTable',
  'ActionsPie',
  'ActionsBarValue',
  'WorldMap',
  'BoldNumber',
  'CalendarHeatmap',
]);
export const TOTAL_VALUE_DISPLAYS: ReadonlySet<string> = new Set([
  'ActionsTable',
  'ActionsPie',
  'ActionsBarValue',
  'WorldMap',
  'BoldNumber',
  'CalendarHeatmap',
]);

export const BREAKDOWN_TYPES: ReadonlySet<string> = new Set(['event', 'person', 'cohort', 'group', 'session', 'hogql', 'event_metadata']);

/** Filter types a trend query applies (compat: the query-side property filter types). */
const FILTER_TYPES: ReadonlySet<string> = new Set(['event', 'person', 'cohort', 'group', 'session', 'hogql', 'element', 'event_metadata']);

/**
 * The most series one query may have. PostHog's editor offers a few dozen; a cap keeps one
 * request from fanning out into thousands of ClickHouse queries.
 */
export const MAX_SERIES = 50;
/**
 * The most characters all property filters of a query may hold: they travel as query parameters
 * in the URL of the ClickHouse request, which the server caps at 1 MiB (http_max_uri_size).
 */
export const MAX_FILTER_CHARS = 256 * 1024;
/**
 * PostHog's BREAKDOWN_VALUES_LIMIT, and its MAX_BREAKDOWN_VALUES_LIMIT: a larger breakdown_limit
 * is lowered to it, not refused (posthog/hogql/constants.py; trends/test/test_breakdown_limits.py,
 * "above_cap": 1000 gives 250).
 */
export const DEFAULT_BREAKDOWN_LIMIT = 25;
export const MAX_BREAKDOWN_LIMIT = 250;
export const WORLD_MAP_BREAKDOWN_LIMIT = 300;
export const MAX_BREAKDOWNS = 3;

export interface TrendSeriesInput {
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

export interface ParsedTrendFilter {
  series: TrendSeriesInput[];
  properties: PropertyGroup;
  filter_test_accounts: boolean;
  date_from: string | null;
  date_to: string | null;
  explicit_date: boolean;
  interval: Interval;
  display: string;
  /** Cohort breakdowns hold one entry per cohort; other types up to three entries (multiple breakdowns). */
  breakdowns: BreakdownInput[];
  /** The request used `breakdowns` (a list): each breakdown_value is a list, even of one. */
  breakdown_is_list: boolean;
  breakdown_limit: number;
  breakdown_hide_other_aggregation: boolean;
  compare: boolean;
  compare_to: string | null;
  formula: string | null;
  aggregation_group_type_index: number | null;
  smoothing_intervals: number;
  /** The request as sent, echoed in each series' `filter`. */
  request: Record<string, unknown>;
}

const JSON_FIELDS = new Set([
  'events',
  'actions',
  'properties',
  'breakdown',
  'breakdowns',
  'exclusions',
  'filters',
  'query',
  'funnel_correlation_names',
  'funnel_correlation_event_names',
  'funnel_correlation_exclude_event_names',
  'funnel_correlation_exclude_names',
  'funnel_correlation_event_exclude_property_names',
]);

/** The legacy GET form sends lists and objects as JSON strings in the query string. */
export function trendFilterFromQuery(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    if (typeof value !== 'string') continue;
    if (JSON_FIELDS.has(key) && /^\s*[[{]/.test(value)) {
      try {
        out[key] = JSON.parse(value);
      } catch {
        throw new TrendFilterError(key, `${key} is not valid JSON.`, 'parse_error');
      }
    } else if (value === 'true' || value === 'false') out[key] = value === 'true';
    else out[key] = value;
  }
  return out;
}

const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const value = body[key];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new TrendFilterError(key, `${key} must be a string.`, 'invalid');
  return value;
}

function optionalBoolean(body: Record<string, unknown>, key: string): boolean {
  const value = body[key];
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new TrendFilterError(key, `${key} must be a boolean.`, 'invalid');
}

/** An optional integer field within [min, max] (digit strings accepted, as GET sends them); null when absent. */
export function optionalInteger(body: Record<string, unknown>, key: string, min: number, max: number): number | null {
  const raw = body[key];
  if (raw === undefined || raw === null || raw === '') return null;
  const value = typeof raw === 'string' && /^-?\d{1,12}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new TrendFilterError(key, `${key} must be an integer.`, 'invalid');
  if (value < min || value > max) throw new TrendFilterError(key, `${key} must be between ${min} and ${max}.`, value < min ? 'min_value' : 'max_value');
  return value;
}

function propertyGroup(value: unknown, attr: string): PropertyGroup {
  try {
    return parsePropertyFilters(value, attr, { types: FILTER_TYPES });
  } catch (error) {
    if (error instanceof PropertyFilterError) throw new TrendFilterError(error.attr, error.message, error.code);
    throw error;
  }
}

function parseSeries(raw: unknown, kind: 'events' | 'actions', index: number, maths: ReadonlySet<string>): TrendSeriesInput {
  const attr = `${kind}__${index}`;
  if (!isJsonObject(raw)) throw new TrendFilterError(attr, 'Each series must be an object.', 'invalid');
  const id = raw['id'];
  let parsedId: string | number | null;
  if (kind === 'actions') {
    const n = typeof id === 'string' && /^\d{1,10}$/.test(id) ? Number(id) : id;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 2_147_483_647)
      throw new TrendFilterError(`${attr}__id`, 'An action series needs the action id.', 'invalid');
    parsedId = n;
  } else {
    if (id !== null && id !== undefined && typeof id !== 'string')
      throw new TrendFilterError(`${attr}__id`, 'An event series id must be the event name, or null for all events.', 'invalid');
    parsedId = id ?? null;
  }
  const text = (key: string) => {
    const value = raw[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') throw new TrendFilterError(`${attr}__${key}`, `${key} must be a string.`, 'invalid');
    return value;
  };
  const math = text('math') ?? 'total';
  if (!maths.has(math))
    throw new TrendFilterError(`${attr}__math`, `Unknown math "${math.slice(0, 100)}" (one of: ${[...maths].join(', ')}).`, 'invalid_choice');
  const series: TrendSeriesInput = {
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
    throw new TrendFilterError(`${attr}__optionalInFunnel`, 'optionalInFunnel must be true or false.', 'invalid');
  if (optional === true) series.optionalInFunnel = true;
  if ((PROPERTY_MATHS as readonly string[]).includes(math) && !series.math_property)
    throw new TrendFilterError(`${attr}__math_property`, `math "${math}" needs math_property.`, 'required');
  if (math === 'hogql' && !series.math_hogql) throw new TrendFilterError(`${attr}__math_hogql`, 'math "hogql" needs math_hogql.', 'required');
  if ((GROUP_ACTOR_MATHS as readonly string[]).includes(math)) {
    const index = optionalInteger(raw, 'math_group_type_index', 0, 4);
    if (index === null && math === 'unique_group')
      throw new TrendFilterError(`${attr}__math_group_type_index`, 'math "unique_group" needs math_group_type_index (0 to 4).', 'required');
    series.math_group_type_index = index;
  }
  return series;
}

/**
 * A breakdown sent as a JSON list in a string (`"[12, \"all\"]"`, as PostHog's own tests send
 * cohort lists) is that list, as PostHog's Filter reads it; any other string is a property name.
 */
function jsonListOrSelf(value: unknown): unknown {
  if (typeof value !== 'string' || !/^\s*\[/.test(value)) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed : value;
  } catch {
    return value;
  }
}

function parseBreakdowns(body: Record<string, unknown>): BreakdownInput[] {
  const type = optionalString(body, 'breakdown_type') ?? 'event';
  if (!isEmpty(body['breakdowns'])) {
    const list = body['breakdowns'];
    if (!Array.isArray(list)) throw new TrendFilterError('breakdowns', 'breakdowns must be a list.', 'invalid');
    if (list.length > MAX_BREAKDOWNS)
      throw new TrendFilterError('breakdowns', `At most ${MAX_BREAKDOWNS} breakdowns are allowed; got ${list.length}.`, 'max_length');
    return list.map((raw, i) => {
      const attr = `breakdowns__${i}`;
      if (!isJsonObject(raw)) throw new TrendFilterError(attr, 'Each breakdown must be an object {property, type}.', 'invalid');
      const itemType = raw['type'] ?? 'event';
      if (typeof itemType !== 'string' || !BREAKDOWN_TYPES.has(itemType) || itemType === 'cohort') {
        throw new TrendFilterError(`${attr}__type`, `Unknown breakdown type "${String(itemType).slice(0, 100)}" for multiple breakdowns.`, 'invalid_choice');
      }
      const property = raw['property'];
      if (typeof property !== 'string' || property === '') throw new TrendFilterError(`${attr}__property`, 'A breakdown needs a property.', 'required');
      return {
        type: itemType,
        property,
        group_type_index: itemType === 'group' ? requiredGroupIndex(raw, 'group_type_index', `${attr}__group_type_index`) : null,
        histogram_bin_count: optionalInteger(raw, 'histogram_bin_count', 1, 100),
        normalize_url: raw['normalize_url'] === true,
      };
    });
  }
  const breakdown = jsonListOrSelf(body['breakdown']);
  if (isEmpty(breakdown)) return [];
  if (!BREAKDOWN_TYPES.has(type))
    throw new TrendFilterError(
      'breakdown_type',
      `Unknown breakdown_type "${type.slice(0, 100)}" (one of: ${[...BREAKDOWN_TYPES].join(', ')}).`,
      'invalid_choice',
    );
  if (type === 'cohort') {
    const list = Array.isArray(breakdown) ? breakdown : [breakdown];
    if (list.length > MAX_SERIES) throw new TrendFilterError('breakdown', `At most ${MAX_SERIES} cohorts are allowed in a breakdown.`, 'max_length');
    return list.map((value, i) => {
      const id = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
      if (id !== 'all' && id !== 0 && !(typeof id === 'number' && Number.isInteger(id) && id > 0 && id <= 2_147_483_647)) {
        throw new TrendFilterError(`breakdown__${i}`, 'A cohort breakdown lists cohort ids or "all".', 'invalid');
      }
      return { type, property: id === 0 ? 'all' : (id as number | string), group_type_index: null, histogram_bin_count: null, normalize_url: false };
    });
  }
  const property = Array.isArray(breakdown) && breakdown.length === 1 ? breakdown[0] : breakdown;
  if (typeof property !== 'string' && typeof property !== 'number')
    throw new TrendFilterError('breakdown', 'breakdown must be a property name (or a HogQL expression for breakdown_type hogql).', 'invalid');
  return [
    {
      type,
      property: String(property),
      group_type_index: type === 'group' ? requiredGroupIndex(body, 'breakdown_group_type_index', 'breakdown_group_type_index') : null,
      histogram_bin_count: optionalInteger(body, 'breakdown_histogram_bin_count', 1, 100),
      normalize_url: optionalBoolean(body, 'breakdown_normalize_url'),
    },
  ];
}

const breakdownLimit = (asked: number | null) => (asked === null ? null : Math.min(asked, MAX_BREAKDOWN_LIMIT));

function requiredGroupIndex(body: Record<string, unknown>, key: string, attr: string): number {
  try {
    const index = optionalInteger(body, key, 0, 4);
    if (index === null) throw new TrendFilterError(attr, 'A group breakdown needs a group type index (0 to 4).', 'required');
    return index;
  } catch (error) {
    if (error instanceof TrendFilterError) throw new TrendFilterError(attr, error.message, error.code);
    throw error;
  }
}

/**
 * Checks a legacy trend filter (GET and POST /insights/trend/, stored insight filters) and
 * answers it normalised: series from events and actions in `order`, every property filter as
 * one group, the breakdown as a list. Anything unknown is a 400 naming the field.
 * `seriesMaths`: the maths a series may have (a funnel's steps take their own).
 */
export function parseTrendFilter(input: unknown, options: { seriesMaths?: ReadonlySet<string> } = {}): ParsedTrendFilter {
  const maths = options.seriesMaths ?? MATHS;
  if (!isJsonObject(input)) throw new TrendFilterError(null, 'The trend query must be a JSON object.', 'parse_error');
  const body = input;
  for (const key of ['events', 'actions']) {
    if (!isEmpty(body[key]) && !Array.isArray(body[key])) throw new TrendFilterError(key, `${key} must be a list.`, 'invalid');
  }
  const events = (Array.isArray(body['events']) ? body['events'] : []) as unknown[];
  const actions = (Array.isArray(body['actions']) ? body['actions'] : []) as unknown[];
  if (events.length + actions.length > MAX_SERIES) {
    throw new TrendFilterError(
      events.length > MAX_SERIES ? 'events' : 'actions',
      `At most ${MAX_SERIES} series are allowed in one query; got ${events.length + actions.length}.`,
      'max_length',
    );
  }
  const parsed = [...events.map((raw, i) => parseSeries(raw, 'events', i, maths)), ...actions.map((raw, i) => parseSeries(raw, 'actions', i, maths))];
  // Legacy filters order entities by their `order`; ties keep list order (events first).
  const series = parsed
    .map((s, i) => ({ s, i }))
    .sort((a, b) => a.s.order - b.s.order || a.i - b.i)
    .map(({ s }) => s);
  series.forEach((s, i) => {
    if (s.order === Number.MAX_SAFE_INTEGER) s.order = i;
  });

  const interval = optionalString(body, 'interval') ?? 'day';
  if (!(INTERVALS as readonly string[]).includes(interval))
    throw new TrendFilterError('interval', `Unknown interval "${interval.slice(0, 100)}" (one of: ${INTERVALS.join(', ')}).`, 'invalid_choice');
  const display = optionalString(body, 'display') ?? 'ActionsLineGraph';
  if (!DISPLAYS.has(display))
    throw new TrendFilterError('display', `Unknown display "${display.slice(0, 100)}" (one of: ${[...DISPLAYS].join(', ')}).`, 'invalid_choice');
  const breakdowns = parseBreakdowns(body);
  const formula = optionalString(body, 'formula');
  const properties = propertyGroup(body['properties'], 'properties');

  let filterChars = 0;
  for (const filter of [properties, ...series.map((s) => s.properties)].flatMap(filtersOf)) {
    filterChars += filter.key.length;
    for (const value of [filter.value].flat()) filterChars += String(value ?? '').length;
  }
  if (filterChars > MAX_FILTER_CHARS) {
    throw new TrendFilterError(
      'properties',
      `Property filters hold ${filterChars} characters of keys and values; at most ${MAX_FILTER_CHARS} are allowed.`,
      'max_length',
    );
  }
  return {
    series,
    properties,
    filter_test_accounts: optionalBoolean(body, 'filter_test_accounts'),
    date_from: optionalString(body, 'date_from'),
    date_to: optionalString(body, 'date_to'),
    explicit_date: optionalBoolean(body, 'explicit_date'),
    interval: interval as Interval,
    display,
    breakdowns,
    breakdown_is_list: !isEmpty(body['breakdowns']),
    // A world map shows every country: PostHog lifts the default to 300 there.
    breakdown_limit:
      breakdownLimit(optionalInteger(body, 'breakdown_limit', 1, Number.MAX_SAFE_INTEGER)) ??
      (display === 'WorldMap' ? WORLD_MAP_BREAKDOWN_LIMIT : DEFAULT_BREAKDOWN_LIMIT),
    breakdown_hide_other_aggregation: optionalBoolean(body, 'breakdown_hide_other_aggregation'),
    compare: optionalBoolean(body, 'compare'),
    compare_to: optionalString(body, 'compare_to'),
    formula,
    aggregation_group_type_index: optionalInteger(body, 'aggregation_group_type_index', 0, 4),
    smoothing_intervals: optionalInteger(body, 'smoothing_intervals', 1, 365) ?? 1,
    request: body,
  };
}
