import { QueryFilterError } from './query-filter-error';

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
  'include_event_types',
  'exclude_events',
  'path_groupings',
  'local_path_cleaning_filters',
  'funnel_filter',
]);

/** The legacy GET form of a trend or funnel sends lists and objects as JSON strings in the query string. */
export function legacyFilterFromQuery(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    if (typeof value !== 'string') continue;
    if (JSON_FIELDS.has(key) && /^\s*[[{]/.test(value)) {
      try {
        out[key] = JSON.parse(value);
      } catch {
        throw new QueryFilterError(key, `${key} is not valid JSON.`, 'parse_error');
      }
    } else if (value === 'true' || value === 'false') out[key] = value === 'true';
    else out[key] = value;
  }
  return out;
}
