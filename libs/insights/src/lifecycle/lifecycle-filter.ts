import { isJsonObject } from '@sightline/json-input';
import { parseQueryFilterBase, type QueryFilterBase } from '../common/query-filter-base';
import { QueryFilterError } from '../common/query-filter-error';
import { commonQueryFields, seriesToEntities } from '../common/query-node-fields';

/** The statuses in PostHog's answer order (LifecycleQueryRunner.calculate). */
export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

export type ParsedLifecycleFilter = QueryFilterBase;

/** `toggledLifecycles` / `lifecycle_toggles`: the statuses a chart shows; checked, never narrowing the answer (PostHog answers all four). */
function checkToggles(value: unknown, attr: string): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value) || value.length > LIFECYCLE_STATUSES.length || !value.every((s) => (LIFECYCLE_STATUSES as readonly unknown[]).includes(s)))
    throw new QueryFilterError(attr, `${attr} must be a list of statuses (${LIFECYCLE_STATUSES.join(', ')}).`, 'invalid');
}

/**
 * Checks a lifecycle filter: the legacy insights/trend/ filter with `shown_as: "Lifecycle"` (or
 * `insight: "LIFECYCLE"`), or a LifecycleQuery node turned into one (lifecycleQueryToFilter):
 * series (their filters all apply; the first names the answer), dates, interval, filters,
 * test-account filters and aggregation_group_type_index. Breakdowns and compare do not apply.
 */
export function parseLifecycleFilter(input: unknown): ParsedLifecycleFilter {
  if (!isJsonObject(input)) throw new QueryFilterError(null, 'The lifecycle query must be a JSON object.', 'parse_error');
  checkToggles(input['toggledLifecycles'], 'lifecycleFilter__toggledLifecycles');
  checkToggles(input['lifecycle_toggles'], 'lifecycle_toggles');
  const base = parseQueryFilterBase(input);
  if (base.series.length === 0) throw new QueryFilterError('series', 'A lifecycle needs one series (an event or an action).', 'required');
  return { ...base, breakdowns: [], breakdown_is_list: false };
}

/** A LifecycleQuery node (posthog/schema.py) as the legacy filter parseLifecycleFilter reads. */
export function lifecycleQueryToFilter(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...seriesToEntities(query['series']), ...commonQueryFields(query) };
  const lifecycle = isJsonObject(query['lifecycleFilter']) ? query['lifecycleFilter'] : {};
  if (lifecycle['toggledLifecycles'] !== undefined) out['toggledLifecycles'] = lifecycle['toggledLifecycles'];
  return out;
}
