// What a trend or funnel asks, as the builders hold it in the address (`?q=`) and as PostHog's
// insight filters (the insight endpoints' bodies and a saved insight's `filters`), both ways.
// No DOM or Preact here: the conversions are unit-tested.

import { PROPERTY_OPERATORS, type PropertyFilter } from './property-filter';

/** The filters that can be sent: a key, and a value unless the operator takes none. */
export function completeFilters(filters: PropertyFilter[] | undefined): PropertyFilter[] {
  return (filters ?? [])
    .filter((f) => f.key !== '' && (PROPERTY_OPERATORS.find((o) => o.value === f.operator)?.valueless || (f.value !== undefined && f.value !== '')))
    .map((f) => {
      const operator = PROPERTY_OPERATORS.find((o) => o.value === f.operator);
      if (operator?.valueless) return { key: f.key, operator: f.operator, type: f.type };
      const value = operator?.numeric && f.value !== '' && Number.isFinite(Number(f.value)) ? Number(f.value) : f.value;
      return { ...f, value };
    });
}

/** Filters read back from saved insight filters (only event and person filters on plain keys). */
export function filtersFromApi(raw: unknown): PropertyFilter[] {
  const list = Array.isArray(raw) ? raw : raw && typeof raw === 'object' && Array.isArray((raw as { values?: unknown }).values) ? flatten(raw) : [];
  return list
    .filter((f): f is Record<string, unknown> => !!f && typeof f === 'object' && typeof (f as { key?: unknown }).key === 'string')
    .filter((f) => f['type'] === undefined || f['type'] === 'event' || f['type'] === 'person')
    .map((f) => ({
      key: String(f['key']),
      operator: typeof f['operator'] === 'string' ? f['operator'] : 'exact',
      value: Array.isArray(f['value'])
        ? String(f['value'][0] ?? '')
        : typeof f['value'] === 'number'
          ? f['value']
          : f['value'] === undefined
            ? undefined
            : String(f['value']),
      type: f['type'] === 'person' ? 'person' : 'event',
    }));
}

function flatten(group: unknown): unknown[] {
  const values = (group as { values?: unknown[] }).values;
  if (!Array.isArray(values)) return [group];
  return values.flatMap((v) => (v && typeof v === 'object' && Array.isArray((v as { values?: unknown }).values) ? flatten(v) : [v]));
}

export interface SeriesQuery {
  /** An event name, or with `kind: 'actions'` an action's id. */
  event: string;
  kind?: 'events' | 'actions';
  math: string;
  math_property?: string;
  properties?: PropertyFilter[];
}

export interface TrendQuery {
  series: SeriesQuery[];
  breakdown: string;
  /** What the breakdown names: an event property (default), a person or group property, or a HogQL expression. */
  breakdown_type?: BreakdownType;
  /** A group breakdown's group type. */
  breakdown_group_type_index?: number;
  interval: 'hour' | 'day' | 'week' | 'month';
  date_from: string;
  /** The range's end (PostHog's `date_to`): absent, now. */
  date_to?: string;
  /** Leave out the project's test accounts (PostHog's "Filter out internal and test users"). */
  filter_test_accounts?: boolean;
  display: Display;
  /** Also the previous period of the same length. */
  compare?: boolean;
  /** Filters every series must match. */
  properties?: PropertyFilter[];
  /** Combines the series by letter, e.g. `A / B * 100`. */
  formula?: string;
}

export type BreakdownType = 'event' | 'person' | 'group' | 'hogql';

export const BREAKDOWN_TYPES: Record<BreakdownType, string> = {
  event: 'Event property',
  person: 'Person property',
  group: 'Group property',
  hogql: 'HogQL expression',
};

/** The breakdown fields of PostHog's filter: the type (and group type) only with a breakdown. */
function breakdownFields(breakdown: string | undefined, type: BreakdownType | undefined, groupTypeIndex: number | undefined) {
  if (!breakdown) return { breakdown: undefined, breakdown_type: undefined };
  const kind = type ?? 'event';
  return {
    breakdown,
    breakdown_type: kind,
    breakdown_group_type_index: kind === 'group' ? (groupTypeIndex ?? 0) : undefined,
  };
}

function breakdownFromFilters(filters: Record<string, unknown>) {
  const type = (Object.keys(BREAKDOWN_TYPES) as BreakdownType[]).find((t) => t === filters['breakdown_type']);
  return {
    breakdown_type: type && type !== 'event' ? type : undefined,
    breakdown_group_type_index:
      type === 'group' && typeof filters['breakdown_group_type_index'] === 'number' ? filters['breakdown_group_type_index'] : undefined,
  };
}

export type Display = 'line' | 'cumulative' | 'bar' | 'bar_value' | 'table' | 'number' | 'pie' | 'world_map';

/** The world map is the trend broken down by the country GeoIP resolved, as PostHog draws it. */
export const WORLD_MAP_BREAKDOWN = '$geoip_country_code';

export const DISPLAYS: Record<Display, { label: string; api: string }> = {
  line: { label: 'Line', api: 'ActionsLineGraph' },
  cumulative: { label: 'Cumulative line', api: 'ActionsLineGraphCumulative' },
  bar: { label: 'Bar', api: 'ActionsBar' },
  bar_value: { label: 'Bar (totals)', api: 'ActionsBarValue' },
  table: { label: 'Table', api: 'ActionsTable' },
  number: { label: 'Number', api: 'BoldNumber' },
  pie: { label: 'Pie', api: 'ActionsPie' },
  world_map: { label: 'World map', api: 'WorldMap' },
};

const DEFAULT_TREND: TrendQuery = { series: [{ event: '$pageview', math: 'total' }], breakdown: '', interval: 'day', date_from: '-7d', display: 'line' };

/** The query the URL holds (`?q=`), or the default one. */
export function queryFromUrl(url: URL): TrendQuery {
  const raw = url.searchParams.get('q');
  if (!raw) return DEFAULT_TREND;
  try {
    const parsed = JSON.parse(raw) as Partial<TrendQuery>;
    return { ...DEFAULT_TREND, ...parsed, series: Array.isArray(parsed.series) && parsed.series.length > 0 ? parsed.series : DEFAULT_TREND.series };
  } catch {
    return DEFAULT_TREND;
  }
}

/**
 * What the Trends page posts for `query` (its filters as JSON text), or null while a series is
 * an action not chosen yet (nothing can be asked).
 */
export function trendRequestBody(query: TrendQuery): string | null {
  return query.series.some((s) => s.kind === 'actions' && !/^\d+$/.test(s.event)) ? null : JSON.stringify(trendFilters(query));
}

/** The trend as PostHog's insight filters: the trend endpoint's body and a saved insight's `filters`. */
export function trendFilters(query: TrendQuery): Record<string, unknown> {
  const entity = (s: SeriesQuery, order: number) => {
    const properties = completeFilters(s.properties);
    return {
      id: s.kind === 'actions' ? Number(s.event) : s.event,
      type: s.kind ?? 'events',
      order,
      math: s.math,
      math_property: s.math_property || undefined,
      properties: properties.length > 0 ? properties : undefined,
    };
  };
  const entities = query.series.map(entity);
  const properties = completeFilters(query.properties);
  const breakdown = query.display === 'world_map' ? WORLD_MAP_BREAKDOWN : query.breakdown;
  return {
    insight: 'TRENDS',
    events: entities.filter((e) => e.type === 'events'),
    actions: entities.some((e) => e.type === 'actions') ? entities.filter((e) => e.type === 'actions') : undefined,
    properties: properties.length > 0 ? properties : undefined,
    ...breakdownFields(breakdown, query.display === 'world_map' ? 'event' : query.breakdown_type, query.breakdown_group_type_index),
    interval: query.interval,
    date_from: query.date_from,
    date_to: query.date_to || undefined,
    filter_test_accounts: query.filter_test_accounts || undefined,
    display: DISPLAYS[query.display].api,
    compare: query.compare || undefined,
    formula: query.formula?.trim() || undefined,
  };
}

/** A saved insight's filters back as this page's query, or null when the page cannot show them. */
export function trendQueryFromFilters(filters: Record<string, unknown>): TrendQuery | null {
  type Entity = { id?: unknown; type?: unknown; order?: unknown; math?: unknown; math_property?: unknown; properties?: unknown };
  const entities = [
    ...(Array.isArray(filters['events']) ? (filters['events'] as Entity[]).map((e) => ({ ...e, type: 'events' })) : []),
    ...(Array.isArray(filters['actions']) ? (filters['actions'] as Entity[]).map((e) => ({ ...e, type: 'actions' })) : []),
  ].sort((a, b) => Number(a.order ?? 0) - Number(b.order ?? 0));
  if (entities.length === 0) return null;
  const display = (Object.keys(DISPLAYS) as Display[]).find((key) => DISPLAYS[key].api === filters['display']) ?? 'line';
  const properties = filtersFromApi(filters['properties']);
  return {
    series: entities.map((e) => ({
      event: String(e.id ?? ''),
      kind: e.type === 'actions' ? 'actions' : undefined,
      math: typeof e.math === 'string' ? e.math : 'total',
      math_property: typeof e.math_property === 'string' ? e.math_property : undefined,
      properties: filtersFromApi(e.properties).length > 0 ? filtersFromApi(e.properties) : undefined,
    })),
    breakdown: typeof filters['breakdown'] === 'string' && display !== 'world_map' ? filters['breakdown'] : '',
    ...(typeof filters['breakdown'] === 'string' && display !== 'world_map' ? breakdownFromFilters(filters) : {}),
    interval: (['hour', 'day', 'week', 'month'] as const).find((i) => i === filters['interval']) ?? 'day',
    date_from: typeof filters['date_from'] === 'string' ? filters['date_from'] : '-7d',
    date_to: typeof filters['date_to'] === 'string' ? filters['date_to'] : undefined,
    filter_test_accounts: filters['filter_test_accounts'] === true ? true : undefined,
    display,
    compare: filters['compare'] === true,
    properties: properties.length > 0 ? properties : undefined,
    formula: typeof filters['formula'] === 'string' ? filters['formula'] : undefined,
  };
}

export type FunnelViz = 'steps' | 'time_to_convert' | 'trends';

export interface FunnelQuery {
  steps: string[];
  order: 'ordered' | 'strict' | 'unordered';
  window_days: number;
  date_from: string;
  date_to?: string;
  /** Steps view: one funnel per value of this property (of the first step) or HogQL expression. */
  breakdown?: string;
  breakdown_type?: BreakdownType;
  breakdown_group_type_index?: number;
  filter_test_accounts?: boolean;
  /** Steps, the time from step 1 to the last (bins), or the conversion rate over time. */
  viz?: FunnelViz;
  interval?: 'hour' | 'day' | 'week' | 'month';
  properties?: PropertyFilter[];
  /** Time to convert: between these steps (0-based; default the first and the last). */
  from_step?: number;
  to_step?: number;
}

const DEFAULT_FUNNEL: FunnelQuery = { steps: ['$pageview', 'signed_up'], order: 'ordered', window_days: 14, date_from: '-30d' };

export function funnelQueryFromUrl(url: URL): FunnelQuery {
  const raw = url.searchParams.get('q');
  if (!raw) return DEFAULT_FUNNEL;
  try {
    const parsed = JSON.parse(raw) as Partial<FunnelQuery>;
    return { ...DEFAULT_FUNNEL, ...parsed, steps: Array.isArray(parsed.steps) && parsed.steps.length >= 2 ? parsed.steps : DEFAULT_FUNNEL.steps };
  } catch {
    return DEFAULT_FUNNEL;
  }
}

/** The funnel as PostHog's insight filters: the funnel endpoint's body and a saved insight's `filters`. */
export function funnelFilters(query: FunnelQuery): Record<string, unknown> {
  const viz = query.viz ?? 'steps';
  const properties = completeFilters(query.properties);
  return {
    insight: 'FUNNELS',
    events: query.steps.map((id, order) => ({ id, type: 'events', order })),
    funnel_order_type: query.order,
    funnel_window_interval: query.window_days,
    funnel_window_interval_unit: 'day',
    funnel_viz_type: viz,
    date_from: query.date_from,
    properties: properties.length > 0 ? properties : undefined,
    ...breakdownFields(viz === 'steps' ? query.breakdown : undefined, query.breakdown_type, query.breakdown_group_type_index),
    date_to: query.date_to || undefined,
    filter_test_accounts: query.filter_test_accounts || undefined,
    interval: viz === 'trends' ? (query.interval ?? 'day') : undefined,
    ...(viz === 'time_to_convert' ? convertSpan(query) : {}),
  };
}

/** The steps a time to convert spans, kept inside the funnel and in order (a removed step can leave them outside). */
export function convertSpan(query: FunnelQuery): { funnel_from_step: number; funnel_to_step: number } {
  const last = query.steps.length - 1;
  const to = Math.min(Math.max(query.to_step ?? last, 1), last);
  const from = Math.min(Math.max(query.from_step ?? 0, 0), to - 1);
  return { funnel_from_step: from, funnel_to_step: to };
}

/** A saved insight's filters back as this page's query, or null when the page cannot show them. */
export function funnelQueryFromFilters(filters: Record<string, unknown>): FunnelQuery | null {
  const events = filters['events'];
  if (!Array.isArray(events) || events.length < 2 || (Array.isArray(filters['actions']) && filters['actions'].length > 0)) return null;
  const order = (['ordered', 'strict', 'unordered'] as const).find((o) => o === filters['funnel_order_type']) ?? 'ordered';
  const windowDays =
    filters['funnel_window_interval_unit'] === 'day' || filters['funnel_window_interval_unit'] === undefined
      ? Number(filters['funnel_window_interval'] ?? 14)
      : 14;
  return {
    steps: (events as { id?: unknown; order?: unknown }[])
      .slice()
      .sort((a, b) => Number(a.order ?? 0) - Number(b.order ?? 0))
      .map((e) => String(e.id ?? '')),
    order,
    window_days: Number.isFinite(windowDays) && windowDays >= 1 ? windowDays : 14,
    date_from: typeof filters['date_from'] === 'string' ? filters['date_from'] : '-30d',
    date_to: typeof filters['date_to'] === 'string' ? filters['date_to'] : undefined,
    breakdown: typeof filters['breakdown'] === 'string' ? filters['breakdown'] : undefined,
    ...(typeof filters['breakdown'] === 'string' ? breakdownFromFilters(filters) : {}),
    filter_test_accounts: filters['filter_test_accounts'] === true ? true : undefined,
    viz: (['steps', 'time_to_convert', 'trends'] as const).find((v) => v === filters['funnel_viz_type']) ?? 'steps',
    interval: (['hour', 'day', 'week', 'month'] as const).find((i) => i === filters['interval']),
    properties: filtersFromApi(filters['properties']).length > 0 ? filtersFromApi(filters['properties']) : undefined,
    from_step: typeof filters['funnel_from_step'] === 'number' ? filters['funnel_from_step'] : undefined,
    to_step: typeof filters['funnel_to_step'] === 'number' ? filters['funnel_to_step'] : undefined,
  };
}

/**
 * The trend as PostHog's TrendsQuery node (the query API's form), for the queries only it takes:
 * the actors behind a point (an InsightActorsQuery over it).
 */
export function trendsQueryNode(query: TrendQuery): Record<string, unknown> {
  const filters = trendFilters(query);
  type Entity = { id: string | number; type: string; order: number; math: string; math_property?: string; properties?: unknown };
  const entities = [...((filters['events'] as Entity[]) ?? []), ...((filters['actions'] as Entity[] | undefined) ?? [])].sort((a, b) => a.order - b.order);
  const defined = (object: Record<string, unknown>) => Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
  return defined({
    kind: 'TrendsQuery',
    series: entities.map((e) =>
      defined({
        kind: e.type === 'actions' ? 'ActionsNode' : 'EventsNode',
        ...(e.type === 'actions' ? { id: e.id } : { event: e.id }),
        math: e.math,
        math_property: e.math_property,
        properties: e.properties,
      }),
    ),
    dateRange: defined({ date_from: filters['date_from'], date_to: filters['date_to'] }),
    interval: filters['interval'],
    properties: filters['properties'],
    filterTestAccounts: filters['filter_test_accounts'],
    breakdownFilter: filters['breakdown']
      ? defined({
          breakdown: filters['breakdown'],
          breakdown_type: filters['breakdown_type'],
          breakdown_group_type_index: filters['breakdown_group_type_index'],
        })
      : undefined,
    trendsFilter: defined({ display: filters['display'], formula: filters['formula'] }),
    compareFilter: filters['compare'] ? { compare: true } : undefined,
  });
}
