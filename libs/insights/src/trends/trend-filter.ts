import Ajv from 'ajv';
import { MAX_FILTER_VALUES } from '@sightline/properties';

export interface TrendEntity {
  id: string | null;
  type?: 'events' | 'actions';
  name?: string;
  custom_name?: string;
  order?: number;
  math?: string;
  properties?: unknown;
}

export interface TrendFilter {
  events?: TrendEntity[];
  actions?: unknown[];
  properties?: unknown;
  filter_test_accounts?: boolean;
  date_from?: string;
  date_to?: string;
  interval?: string;
  display?: string;
  breakdown?: unknown;
  compare?: boolean;
  formula?: string;
}

const entitySchema = {
  type: 'object',
  properties: {
    id: { type: 'string', nullable: true },
    type: { type: 'string', enum: ['events', 'actions'], nullable: true },
    name: { type: 'string', nullable: true },
    custom_name: { type: 'string', nullable: true },
    order: { type: 'integer', nullable: true },
    math: { type: 'string', nullable: true },
    properties: {},
  },
  required: ['id'],
  additionalProperties: true,
} as const;

const filterSchema = {
  type: 'object',
  properties: {
    events: { type: 'array', nullable: true, items: entitySchema },
    actions: { type: 'array', nullable: true, items: {} },
    properties: {},
    filter_test_accounts: { type: 'boolean', nullable: true },
    date_from: { type: 'string', nullable: true },
    date_to: { type: 'string', nullable: true },
    interval: { type: 'string', nullable: true },
    display: { type: 'string', nullable: true },
    breakdown: {},
    compare: { type: 'boolean', nullable: true },
    formula: { type: 'string', nullable: true },
  },
  additionalProperties: true,
} as const;

const ajv = new Ajv({ allErrors: false, coerceTypes: false, strict: false });
const validateFilter = ajv.compile<TrendFilter>(filterSchema);

export class TrendFilterError extends Error {
  constructor(
    readonly attr: string | null,
    message: string,
    readonly code = 'invalid_input',
  ) {
    super(message);
  }
}

/** A checked trend filter: series and the whole query carry only supported property filters. */
export type ParsedTrendFilter = Omit<TrendFilter, 'events' | 'properties'> & {
  events: (Omit<TrendEntity, 'properties'> & { properties: EventPropertyFilter[] })[];
  properties: EventPropertyFilter[];
};

/** The legacy GET form sends lists and objects as JSON strings in the query string. */
export function trendFilterFromQuery(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    if (typeof value !== 'string') continue;
    if (['events', 'actions', 'properties', 'breakdown'].includes(key) && /^[[{]/.test(value)) {
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

const SUPPORTED_MATH = new Set(['total', 'dau']);

/**
 * The most characters all property filters of a query may hold: they travel as query parameters
 * in the URL of the ClickHouse request, which the server caps at 1 MiB (http_max_uri_size).
 */
export const MAX_FILTER_CHARS = 256 * 1024;

/**
 * The most series one query may have. PostHog's editor offers a few dozen; a cap keeps one
 * request from fanning out into thousands of ClickHouse queries.
 */
export const MAX_SERIES = 50;
const isEmpty = (v: unknown) =>
  v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);

/** An event-property filter the trends query can apply: equality with one value or any of a list. */
export interface EventPropertyFilter {
  key: string;
  type: 'event';
  operator: 'exact';
  value: string | number | boolean | (string | number | boolean)[];
}

const isScalar = (v: unknown): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v);

/**
 * Property filters of a series or of the whole query. Supported so far: event
 * properties with the `exact` operator (a value or a list of values); anything else
 * is refused by name rather than ignored.
 */
function parseEventPropertyFilters(value: unknown, attr: string): EventPropertyFilter[] {
  if (isEmpty(value)) return [];
  // A property group {type: AND, values: [...]} with plain filters is the same as a flat list.
  const group = value as { type?: unknown; values?: unknown };
  const list = Array.isArray(value) ? value : group.type === 'AND' && Array.isArray(group.values) ? group.values : null;
  if (!list) throw new TrendFilterError(attr, 'Property filters must be a list (or an AND group) of property filters.', 'not_supported');
  return list.map((raw, i) => {
    const p = raw as Record<string, unknown>;
    const where = `${attr}__${i}`;
    if (typeof p !== 'object' || p === null || typeof p['key'] !== 'string')
      throw new TrendFilterError(where, 'A property filter needs a key.', 'invalid_input');
    if ((p['type'] ?? 'event') !== 'event')
      throw new TrendFilterError(where, `Property filters of type "${String(p['type'])}" are not supported yet (supported: event).`, 'not_supported');
    if ((p['operator'] ?? 'exact') !== 'exact')
      throw new TrendFilterError(where, `Operator "${String(p['operator'])}" is not supported yet (supported: exact).`, 'not_supported');
    const v = p['value'];
    if (!isScalar(v) && !(Array.isArray(v) && v.length > 0 && v.every(isScalar)))
      throw new TrendFilterError(where, 'An exact property filter needs a value or a non-empty list of values.', 'invalid_input');
    if (Array.isArray(v) && v.length > MAX_FILTER_VALUES)
      throw new TrendFilterError(`${where}__value`, `At most ${MAX_FILTER_VALUES} values are allowed in one property filter; got ${v.length}.`, 'max_length');
    return { key: p['key'], type: 'event', operator: 'exact', value: v };
  });
}

/**
 * Checks a trend request. Supported so far: event series with math total or dau, daily
 * interval, exact event-property filters; no breakdowns, compare or formulas — anything else gets a
 * clear 400 naming what is not supported yet rather than a silently wrong answer.
 */
export function parseTrendFilter(body: unknown): ParsedTrendFilter {
  if (!validateFilter(body)) {
    const e = validateFilter.errors?.[0];
    const attr = e?.instancePath.replace(/^\//, '').replace(/\//g, '__') || null;
    throw new TrendFilterError(attr, `${attr ?? 'body'} ${e?.message ?? 'is invalid'}`);
  }
  const events = body.events ?? [];
  if (!isEmpty(body.actions)) throw new TrendFilterError('actions', 'Action series are not supported yet; use events.', 'not_supported');
  if (events.length === 0) throw new TrendFilterError('events', 'One of events or actions is required.', 'required');
  if (events.length > MAX_SERIES)
    throw new TrendFilterError('events', `At most ${MAX_SERIES} series are allowed in one query; got ${events.length}.`, 'max_length');
  const series = events.map((entity, i) => {
    const math = entity.math ?? 'total';
    if (!SUPPORTED_MATH.has(math))
      throw new TrendFilterError(`events__${i}__math`, `math "${math}" is not supported yet (supported: total, dau).`, 'not_supported');
    return { ...entity, properties: parseEventPropertyFilters(entity.properties, `events__${i}__properties`) };
  });
  const properties = parseEventPropertyFilters(body.properties, 'properties');
  let filterChars = 0;
  for (const filter of [properties, ...series.map((entity) => entity.properties)].flat()) {
    filterChars += filter.key.length;
    for (const value of [filter.value].flat()) filterChars += String(value).length;
  }
  if (filterChars > MAX_FILTER_CHARS) {
    throw new TrendFilterError(
      'properties',
      `Property filters hold ${filterChars} characters of keys and values; at most ${MAX_FILTER_CHARS} are allowed.`,
      'max_length',
    );
  }
  if (!isEmpty(body.breakdown)) throw new TrendFilterError('breakdown', 'Breakdowns are not supported yet.', 'not_supported');
  if (body.compare) throw new TrendFilterError('compare', 'compare is not supported yet.', 'not_supported');
  if (body.formula) throw new TrendFilterError('formula', 'Formulas are not supported yet.', 'not_supported');
  if (body.interval && body.interval !== 'day')
    throw new TrendFilterError('interval', `interval "${body.interval}" is not supported yet (supported: day).`, 'not_supported');
  if (body.display && !['ActionsLineGraph', 'ActionsTable', 'ActionsBar'].includes(body.display)) {
    throw new TrendFilterError('display', `display "${body.display}" is not supported yet.`, 'not_supported');
  }
  return { ...body, events: series, properties };
}
