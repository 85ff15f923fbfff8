import { isJsonObject } from '@sightline/json-input';
import { commonQueryFields } from '../common/query-node-fields';
import { QueryFilterError } from '../common/query-filter-error';

/** PathsFilter's fields (posthog/schema.py) and the legacy PATHS filter's name for each (filter_to_query.py). */
const PATHS_FILTER_FIELDS: Record<string, string> = {
  pathsHogQLExpression: 'paths_hogql_expression',
  includeEventTypes: 'include_event_types',
  startPoint: 'start_point',
  endPoint: 'end_point',
  pathGroupings: 'path_groupings',
  excludeEvents: 'exclude_events',
  stepLimit: 'step_limit',
  pathReplacements: 'path_replacements',
  localPathCleaningFilters: 'local_path_cleaning_filters',
  edgeLimit: 'edge_limit',
  minEdgeWeight: 'min_edge_weight',
  maxEdgeWeight: 'max_edge_weight',
};

/** A PathsQuery node (PostHog's query API) read as the legacy PATHS filter. */
export function pathsQueryToFilter(query: Record<string, unknown>): Record<string, unknown> {
  const common = commonQueryFields(query);
  const out: Record<string, unknown> = {};
  for (const key of ['date_from', 'date_to', 'explicit_date', 'properties', 'filter_test_accounts']) if (common[key] !== undefined) out[key] = common[key];
  const paths = query['pathsFilter'];
  if (paths !== undefined && paths !== null && !isJsonObject(paths)) throw new QueryFilterError('pathsFilter', 'pathsFilter must be an object.', 'invalid');
  for (const [from, to] of Object.entries(PATHS_FILTER_FIELDS)) if (paths?.[from] !== undefined) out[to] = paths[from];
  if (query['funnelPathsFilter'] !== undefined && query['funnelPathsFilter'] !== null) out['funnel_paths'] = query['funnelPathsFilter'];
  if (query['samplingFactor'] !== undefined) out['sampling_factor'] = query['samplingFactor'];
  return out;
}
