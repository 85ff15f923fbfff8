import { isJsonObject } from '@sightline/json-input';
import { optionalBoolean, optionalInteger, optionalString } from '../common/filter-fields';
import { parseQueryFilterBase, type QueryFilterBase } from '../common/query-filter-base';
import { QueryFilterError } from '../common/query-filter-error';
import { commonQueryFields, seriesToEntities } from '../common/query-node-fields';

/** How an actor's events in one interval are counted against stickinessCriteria (PostHog's get_count_operator). */
export const STICKINESS_OPERATORS = { gte: '>=', lte: '<=', exact: '=' } as const;
export type StickinessOperator = keyof typeof STICKINESS_OPERATORS;

/** The most intervals one stickiness window may group (intervalCount). */
export const MAX_INTERVAL_COUNT = 1000;

export interface ParsedStickinessFilter extends QueryFilterBase {
  compare: boolean;
  compare_to: string | null;
  /** Intervals grouped into one window, counted back from date_to (PostHog's intervalCount); 1 when absent. */
  interval_count: number;
  /** An interval counts for an actor only when its event count meets this (stickinessCriteria); null: any event. */
  criteria: { operator: StickinessOperator; value: number } | null;
  /** `computedAs: "cumulative"`: bar N counts the actors active on N or more intervals. */
  cumulative: boolean;
}

function parseCriteria(raw: unknown, attr: string): ParsedStickinessFilter['criteria'] {
  if (raw === undefined || raw === null) return null;
  if (!isJsonObject(raw)) throw new QueryFilterError(attr, 'stickinessCriteria must be an object {operator, value}.', 'invalid');
  const operator = raw['operator'];
  if (typeof operator !== 'string' || !Object.hasOwn(STICKINESS_OPERATORS, operator))
    throw new QueryFilterError(`${attr}__operator`, `operator must be one of: ${Object.keys(STICKINESS_OPERATORS).join(', ')}.`, 'invalid_choice');
  const value = raw['value'];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > 1_000_000_000)
    throw new QueryFilterError(`${attr}__value`, 'value must be an integer from 0.', 'invalid');
  return { operator: operator as StickinessOperator, value };
}

/**
 * Checks a stickiness filter: the legacy insights/trend/ filter with `shown_as: "Stickiness"`
 * (or `insight: "STICKINESS"`), or a StickinessQuery node turned into one
 * (stickinessQueryToFilter). Series, dates, interval and filters as every insight; compare and
 * compare_to; the query node's intervalCount, stickinessCriteria and computedAs.
 */
export function parseStickinessFilter(input: unknown): ParsedStickinessFilter {
  if (!isJsonObject(input)) throw new QueryFilterError(null, 'The stickiness query must be a JSON object.', 'parse_error');
  const base = parseQueryFilterBase(input);
  const computedAs = optionalString(input, 'stickiness_computed_as') ?? 'non_cumulative';
  if (computedAs !== 'non_cumulative' && computedAs !== 'cumulative')
    throw new QueryFilterError('stickinessFilter__computedAs', 'computedAs must be "non_cumulative" or "cumulative".', 'invalid_choice');
  return {
    ...base,
    compare: optionalBoolean(input, 'compare'),
    compare_to: optionalString(input, 'compare_to'),
    interval_count: optionalInteger(input, 'intervalCount', 1, MAX_INTERVAL_COUNT) ?? 1,
    criteria: parseCriteria(input['stickiness_criteria'], 'stickinessFilter__stickinessCriteria'),
    cumulative: computedAs === 'cumulative',
  };
}

/**
 * A StickinessQuery node (posthog/schema.py) as the legacy filter parseStickinessFilter reads:
 * series, dateRange, interval, intervalCount, properties, filterTestAccounts, compareFilter
 * (or the older stickinessFilter.compare) and stickinessFilter's criteria and computedAs.
 */
export function stickinessQueryToFilter(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...seriesToEntities(query['series']), ...commonQueryFields(query) };
  // Stickiness has no breakdown: PostHog's StickinessQuery carries none.
  for (const key of ['breakdown', 'breakdown_type', 'breakdowns', 'breakdown_limit', 'breakdown_group_type_index', 'breakdown_histogram_bin_count'])
    delete out[key];
  if (query['intervalCount'] !== undefined) out['intervalCount'] = query['intervalCount'];
  const stickiness = isJsonObject(query['stickinessFilter']) ? query['stickinessFilter'] : {};
  const compare = isJsonObject(query['compareFilter']) ? query['compareFilter'] : stickiness;
  if (compare['compare'] !== undefined) out['compare'] = compare['compare'];
  if (compare['compare_to'] !== undefined) out['compare_to'] = compare['compare_to'];
  if (stickiness['stickinessCriteria'] !== undefined) out['stickiness_criteria'] = stickiness['stickinessCriteria'];
  if (stickiness['computedAs'] !== undefined) out['stickiness_computed_as'] = stickiness['computedAs'];
  return out;
}
