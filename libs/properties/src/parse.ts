import { isJsonObject } from '@sightline/json-input';
import { RE2JS } from 're2js';
import { NUMBER_RANGE_TEXT, withinNumberRange } from './number-range';
import { PROPERTY_OPERATORS, type PropertyFilter, type PropertyGroup } from './types';

export class PropertyFilterError extends Error {
  constructor(
    readonly attr: string,
    message: string,
    readonly code = 'invalid_input',
  ) {
    super(message);
  }
}

/** The most values one filter may list: they travel as query parameters. */
export const MAX_FILTER_VALUES = 1_000;
/** Group type indexes a project can have (PostHog allows five group types). */
export const MAX_GROUP_TYPE_INDEX = 4;

const NUMERIC_OPERATORS = new Set(['gt', 'gte', 'lt', 'lte', 'min', 'max']);
const RANGE_OPERATORS = new Set(['between', 'not_between']);
const VALUELESS_OPERATORS = new Set(['is_set', 'is_not_set']);
const PATTERN_OPERATORS = new Set(['regex', 'not_regex']);
/** What an `element` filter can read, and the operators selectors and tag names support (PostHog's). */
const ELEMENT_KEYS = new Set(['tag_name', 'text', 'href', 'selector']);
const ELEMENT_MATCH_OPERATORS = new Set(['exact', 'is_not']);

export interface ParseOptions {
  /** Filter types this caller can apply; anything else is refused by name rather than ignored. */
  types: ReadonlySet<string>;
  /** Operators this caller can apply (default: all). */
  operators?: ReadonlySet<string>;
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** A pattern RE2 (ClickHouse's `match`, PostHog's flag service) compiles, or null. */
export function re2Problem(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The values a numeric operator compares: the first of a list, or both ends of a range. */
const numbersOf = (operator: string, value: unknown): unknown[] =>
  RANGE_OPERATORS.has(operator) ? (value as unknown[]) : [Array.isArray(value) ? value[0] : value];

/**
 * Cohort filter types PostHog's legacy filters still carry: they name how PostHog evaluated the
 * cohort (a precomputed member table, a static list), and its insights read both as a plain
 * cohort filter (posthog/hogql_queries/legacy_compatibility/clean_properties.py). Sightline picks
 * static or dynamic membership from the cohort itself.
 */
const LEGACY_COHORT_TYPES = new Set(['precalculated-cohort', 'static-cohort']);

function parseFilter(raw: Record<string, unknown>, attr: string, options: ParseOptions): PropertyFilter {
  const given = raw['type'] ?? 'event';
  const type = typeof given === 'string' && LEGACY_COHORT_TYPES.has(given) && options.types.has('cohort') ? 'cohort' : given;
  if (typeof type !== 'string' || !options.types.has(type)) {
    throw new PropertyFilterError(
      attr,
      `Property filters of type "${String(type)}" are not supported here (supported: ${[...options.types].join(', ')}).`,
      'not_supported',
    );
  }
  const operator = raw['operator'] ?? (type === 'cohort' ? 'in' : 'exact');
  if (typeof operator !== 'string' || !PROPERTY_OPERATORS.has(operator))
    throw new PropertyFilterError(attr, `Unknown operator "${String(operator)}".`, 'invalid_operator');
  if (options.operators && !options.operators.has(operator)) {
    throw new PropertyFilterError(attr, `Operator "${operator}" is not supported here (supported: ${[...options.operators].join(', ')}).`, 'not_supported');
  }
  const key = raw['key'];
  if (typeof key !== 'string' || key === '') throw new PropertyFilterError(attr, 'A property filter needs a key.', 'invalid_input');
  const value = raw['value'];
  const filter: PropertyFilter = { key, type, operator, value };
  if (type === 'element') {
    if (!ELEMENT_KEYS.has(key))
      throw new PropertyFilterError(attr, `Element filters read text, href, tag_name or selector, not "${key.slice(0, 100)}".`, 'invalid_input');
    if ((key === 'selector' || key === 'tag_name') && !ELEMENT_MATCH_OPERATORS.has(operator)) {
      throw new PropertyFilterError(attr, `Element ${key} filters support the operators exact and is_not, not "${operator}".`, 'not_supported');
    }
  }
  if (type === 'group') {
    const index = raw['group_type_index'];
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) > MAX_GROUP_TYPE_INDEX) {
      throw new PropertyFilterError(attr, `A group property filter needs a group_type_index from 0 to ${MAX_GROUP_TYPE_INDEX}.`, 'invalid_input');
    }
    filter.group_type_index = index as number;
  }
  if (raw['negation'] === true) filter.negation = true;
  if (type === 'cohort') {
    const id = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
    if (!Number.isInteger(id) || (id as number) < 1 || (id as number) > 2_147_483_647)
      throw new PropertyFilterError(attr, 'A cohort filter needs the cohort id as its value.', 'invalid_input');
    filter.value = id;
    return filter;
  }
  // A HogQL filter's key is the whole boolean expression; it has no value.
  if (type === 'hogql' || VALUELESS_OPERATORS.has(operator)) return filter;
  if (value === undefined || value === null) throw new PropertyFilterError(attr, `Operator "${operator}" needs a value.`, 'invalid_input');
  if (Array.isArray(value)) {
    if (value.length === 0 || !value.every(isScalar))
      throw new PropertyFilterError(attr, 'A list of values must hold strings, numbers or booleans.', 'invalid_input');
    if (value.length > MAX_FILTER_VALUES) {
      throw new PropertyFilterError(
        `${attr}__value`,
        `At most ${MAX_FILTER_VALUES} values are allowed in one property filter; got ${value.length}.`,
        'max_length',
      );
    }
  } else if (!isScalar(value))
    throw new PropertyFilterError(attr, 'A property filter value must be a string, number, boolean or a list of them.', 'invalid_input');
  if (NUMERIC_OPERATORS.has(operator) && !Number.isFinite(Number(Array.isArray(value) ? value[0] : value))) {
    throw new PropertyFilterError(attr, `Operator "${operator}" needs a number.`, 'invalid_input');
  }
  if (RANGE_OPERATORS.has(operator) && !(Array.isArray(value) && value.length === 2 && value.every((v) => Number.isFinite(Number(v))))) {
    throw new PropertyFilterError(attr, `Operator "${operator}" needs two numbers [low, high].`, 'invalid_input');
  }
  if ((NUMERIC_OPERATORS.has(operator) || RANGE_OPERATORS.has(operator)) && !numbersOf(operator, value).every(withinNumberRange)) {
    throw new PropertyFilterError(`${attr}__value`, `Operator "${operator}" compares numbers ${NUMBER_RANGE_TEXT}.`, 'max_value');
  }
  if (PATTERN_OPERATORS.has(operator)) {
    const problem = re2Problem(String(value));
    if (problem) throw new PropertyFilterError(attr, `Invalid regular expression (RE2 syntax): ${problem.slice(0, 200)}`, 'invalid_value');
  }
  return filter;
}

function parseNode(value: unknown, attr: string, options: ParseOptions): PropertyGroup | PropertyFilter {
  if (Array.isArray(value)) return { type: 'AND', values: value.map((item, i) => parseNode(item, `${attr}__${i}`, options)) };
  if (!isJsonObject(value)) throw new PropertyFilterError(attr, 'A property filter must be an object, a list, or a group {type, values}.', 'invalid_input');
  if ((value['type'] === 'AND' || value['type'] === 'OR') && 'values' in value) {
    if (!Array.isArray(value['values'])) throw new PropertyFilterError(`${attr}__values`, 'A property group needs a list of values.', 'invalid_input');
    return { type: value['type'], values: value['values'].map((item, i) => parseNode(item, `${attr}__values__${i}`, options)) };
  }
  if (!('type' in value) && !('value' in value) && !('operator' in value)) {
    // PostHog's legacy dict form, `{"$browser": "Safari", "$os__icontains": "mac"}` (Filter._parse_properties):
    // each entry an event property filter, its operator after "__" in the key. A filter object
    // always has a value, an operator or a type, so `{"key": "val"}` is the dict form too.
    return {
      type: 'AND',
      values: Object.entries(value).map(([name, v]) => {
        const [key, operator] = name.split('__');
        return parseFilter({ key, value: v, ...(operator ? { operator } : {}) }, `${attr}__${name}`, options);
      }),
    };
  }
  return parseFilter(value, attr, options);
}

/**
 * Property filters in every shape PostHog clients send: nothing, a flat list (AND), a group
 * `{type: "AND"|"OR", values}` nested at any depth, or a list of groups. Always answers one
 * group; each filter checked (type, operator, value) with the field named on failure.
 */
export function parsePropertyFilters(value: unknown, attr: string, options: ParseOptions): PropertyGroup {
  if (value === undefined || value === null || (isJsonObject(value) && Object.keys(value).length === 0)) return { type: 'AND', values: [] };
  const node = parseNode(value, attr, options);
  return 'values' in node && (node.type === 'AND' || node.type === 'OR') ? node : { type: 'AND', values: [node] };
}

/** Every filter of a group, however deeply nested. */
export function filtersOf(group: PropertyGroup): PropertyFilter[] {
  return group.values.flatMap((node) =>
    'values' in node && (node.type === 'AND' || node.type === 'OR') ? filtersOf(node as PropertyGroup) : [node as PropertyFilter],
  );
}
