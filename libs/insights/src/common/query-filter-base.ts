import { filtersOf, type PropertyGroup } from '@sightline/properties';
import { breakdownLimit, DEFAULT_BREAKDOWN_LIMIT, parseBreakdowns } from './breakdowns';
import { INTERVALS, type Interval } from './date-range';
import type { BreakdownInput } from './events-sql';
import { isEmpty, optionalBoolean, optionalInteger, optionalString, propertyGroup } from './filter-fields';
import { QueryFilterError } from './query-filter-error';
import { MATHS, MAX_SERIES, parseSeries, type SeriesInput } from './series';

/**
 * The most characters all property filters of a query may hold: they travel as query parameters
 * in the URL of the ClickHouse request, which the server caps at 1 MiB (http_max_uri_size).
 */
export const MAX_FILTER_CHARS = 256 * 1024;

/** What every insight filter (trend, funnel) holds: its series, dates, filters and breakdowns. */
export interface QueryFilterBase {
  series: SeriesInput[];
  properties: PropertyGroup;
  filter_test_accounts: boolean;
  date_from: string | null;
  date_to: string | null;
  explicit_date: boolean;
  interval: Interval;
  /** Cohort breakdowns hold one entry per cohort; other types up to three entries (multiple breakdowns). */
  breakdowns: BreakdownInput[];
  /** The request used `breakdowns` (a list): each breakdown_value is a list, even of one. */
  breakdown_is_list: boolean;
  breakdown_limit: number;
  aggregation_group_type_index: number | null;
  /** The request as sent, echoed in each series' `filter`. */
  request: Record<string, unknown>;
}

export interface QueryFilterBaseOptions {
  /** The maths a series may have; default MATHS (a funnel's steps take their own). */
  seriesMaths?: ReadonlySet<string>;
  /** breakdown_limit when none is asked; default DEFAULT_BREAKDOWN_LIMIT. */
  defaultBreakdownLimit?: number;
}

/**
 * The fields every legacy insight filter shares, checked and normalised: series from events and
 * actions in `order`, every property filter as one group, the breakdown as a list. Anything
 * wrong is a 400 naming the field.
 */
export function parseQueryFilterBase(body: Record<string, unknown>, options: QueryFilterBaseOptions = {}): QueryFilterBase {
  const maths = options.seriesMaths ?? MATHS;
  for (const key of ['events', 'actions']) {
    if (!isEmpty(body[key]) && !Array.isArray(body[key])) throw new QueryFilterError(key, `${key} must be a list.`, 'invalid');
  }
  const events = (Array.isArray(body['events']) ? body['events'] : []) as unknown[];
  const actions = (Array.isArray(body['actions']) ? body['actions'] : []) as unknown[];
  if (events.length + actions.length > MAX_SERIES) {
    throw new QueryFilterError(
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
    throw new QueryFilterError('interval', `Unknown interval "${interval.slice(0, 100)}" (one of: ${INTERVALS.join(', ')}).`, 'invalid_choice');
  return { series, interval: interval as Interval, ...filtersAndBreakdowns(body, series, options) };
}

function filtersAndBreakdowns(
  body: Record<string, unknown>,
  series: SeriesInput[],
  options: QueryFilterBaseOptions,
): Omit<QueryFilterBase, 'series' | 'interval'> {
  const breakdowns = parseBreakdowns(body);
  const properties = propertyGroup(body['properties'], 'properties');
  let filterChars = 0;
  for (const filter of [properties, ...series.map((s) => s.properties)].flatMap(filtersOf)) {
    filterChars += filter.key.length;
    for (const value of [filter.value].flat()) filterChars += String(value ?? '').length;
  }
  if (filterChars > MAX_FILTER_CHARS) {
    throw new QueryFilterError(
      'properties',
      `Property filters hold ${filterChars} characters of keys and values; at most ${MAX_FILTER_CHARS} are allowed.`,
      'max_length',
    );
  }
  return {
    properties,
    filter_test_accounts: optionalBoolean(body, 'filter_test_accounts'),
    date_from: optionalString(body, 'date_from'),
    date_to: optionalString(body, 'date_to'),
    explicit_date: optionalBoolean(body, 'explicit_date'),
    breakdowns,
    breakdown_is_list: !isEmpty(body['breakdowns']),
    breakdown_limit:
      breakdownLimit(optionalInteger(body, 'breakdown_limit', 1, Number.MAX_SAFE_INTEGER)) ?? options.defaultBreakdownLimit ?? DEFAULT_BREAKDOWN_LIMIT,
    aggregation_group_type_index: optionalInteger(body, 'aggregation_group_type_index', 0, 4),
    request: body,
  };
}
