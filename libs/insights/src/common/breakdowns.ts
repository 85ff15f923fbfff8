import { isJsonObject } from '@sightline/json-input';
import type { BreakdownInput } from './events-sql';
import { isEmpty, optionalBoolean, optionalInteger, optionalString } from './filter-fields';
import { QueryFilterError } from './query-filter-error';
import { MAX_SERIES } from './series';

export const BREAKDOWN_TYPES: ReadonlySet<string> = new Set(['event', 'person', 'cohort', 'group', 'session', 'hogql', 'event_metadata']);

/**
 * PostHog's BREAKDOWN_VALUES_LIMIT, and its MAX_BREAKDOWN_VALUES_LIMIT: a larger breakdown_limit
 * is lowered to it, not refused (posthog/hogql/constants.py; trends/test/test_breakdown_limits.py,
 * "above_cap": 1000 gives 250).
 */
export const DEFAULT_BREAKDOWN_LIMIT = 25;
export const MAX_BREAKDOWN_LIMIT = 250;
export const MAX_BREAKDOWNS = 3;

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

/** A legacy filter's breakdown (`breakdown` + `breakdown_type`, or the `breakdowns` list) as a list. */
export function parseBreakdowns(body: Record<string, unknown>): BreakdownInput[] {
  const type = optionalString(body, 'breakdown_type') ?? 'event';
  if (!isEmpty(body['breakdowns'])) {
    const list = body['breakdowns'];
    if (!Array.isArray(list)) throw new QueryFilterError('breakdowns', 'breakdowns must be a list.', 'invalid');
    if (list.length > MAX_BREAKDOWNS)
      throw new QueryFilterError('breakdowns', `At most ${MAX_BREAKDOWNS} breakdowns are allowed; got ${list.length}.`, 'max_length');
    return list.map((raw, i) => {
      const attr = `breakdowns__${i}`;
      if (!isJsonObject(raw)) throw new QueryFilterError(attr, 'Each breakdown must be an object {property, type}.', 'invalid');
      const itemType = raw['type'] ?? 'event';
      if (typeof itemType !== 'string' || !BREAKDOWN_TYPES.has(itemType) || itemType === 'cohort') {
        throw new QueryFilterError(`${attr}__type`, `Unknown breakdown type "${String(itemType).slice(0, 100)}" for multiple breakdowns.`, 'invalid_choice');
      }
      const property = raw['property'];
      if (typeof property !== 'string' || property === '') throw new QueryFilterError(`${attr}__property`, 'A breakdown needs a property.', 'required');
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
    throw new QueryFilterError(
      'breakdown_type',
      `Unknown breakdown_type "${type.slice(0, 100)}" (one of: ${[...BREAKDOWN_TYPES].join(', ')}).`,
      'invalid_choice',
    );
  if (type === 'cohort') {
    const list = Array.isArray(breakdown) ? breakdown : [breakdown];
    if (list.length > MAX_SERIES) throw new QueryFilterError('breakdown', `At most ${MAX_SERIES} cohorts are allowed in a breakdown.`, 'max_length');
    return list.map((value, i) => {
      const id = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
      if (id !== 'all' && id !== 0 && !(typeof id === 'number' && Number.isInteger(id) && id > 0 && id <= 2_147_483_647)) {
        throw new QueryFilterError(`breakdown__${i}`, 'A cohort breakdown lists cohort ids or "all".', 'invalid');
      }
      return { type, property: id === 0 ? 'all' : (id as number | string), group_type_index: null, histogram_bin_count: null, normalize_url: false };
    });
  }
  const property = Array.isArray(breakdown) && breakdown.length === 1 ? breakdown[0] : breakdown;
  if (typeof property !== 'string' && typeof property !== 'number')
    throw new QueryFilterError('breakdown', 'breakdown must be a property name (or a HogQL expression for breakdown_type hogql).', 'invalid');
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

/** An asked breakdown_limit, lowered to MAX_BREAKDOWN_LIMIT. */
export const breakdownLimit = (asked: number | null) => (asked === null ? null : Math.min(asked, MAX_BREAKDOWN_LIMIT));

function requiredGroupIndex(body: Record<string, unknown>, key: string, attr: string): number {
  try {
    const index = optionalInteger(body, key, 0, 4);
    if (index === null) throw new QueryFilterError(attr, 'A group breakdown needs a group type index (0 to 4).', 'required');
    return index;
  } catch (error) {
    if (error instanceof QueryFilterError) throw new QueryFilterError(attr, error.message, error.code);
    throw error;
  }
}
