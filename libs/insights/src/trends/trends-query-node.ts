import { isJsonObject } from '@sightline/json-input';
import { commonQueryFields, seriesToEntities } from '../common/query-node-fields';

/**
 * A TrendsQuery node (PostHog's query API) as the legacy trend filter: series, dateRange,
 * interval, properties, filterTestAccounts, trendsFilter (display, formula, smoothing),
 * breakdownFilter and compareFilter.
 */
export function trendsQueryToFilter(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...seriesToEntities(query['series']), ...commonQueryFields(query) };
  const trends = isJsonObject(query['trendsFilter']) ? query['trendsFilter'] : {};
  if (trends['display'] !== undefined) out['display'] = trends['display'];
  const formula = trends['formula'] ?? (Array.isArray(trends['formulas']) ? trends['formulas'][0] : undefined);
  if (formula !== undefined) out['formula'] = isJsonObject(formula) ? formula['formula'] : formula;
  if (trends['smoothingIntervals'] !== undefined) out['smoothing_intervals'] = trends['smoothingIntervals'];
  const compare = isJsonObject(query['compareFilter']) ? query['compareFilter'] : {};
  if (compare['compare'] !== undefined) out['compare'] = compare['compare'];
  if (compare['compare_to'] !== undefined) out['compare_to'] = compare['compare_to'];
  return out;
}
