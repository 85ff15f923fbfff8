import { isJsonObject } from '@sightline/json-input';
import { optionalBoolean, optionalInteger, optionalString } from '../common/filter-fields';
import { parseQueryFilterBase, type QueryFilterBase } from '../common/query-filter-base';
import { QueryFilterError } from '../common/query-filter-error';

/** ChartDisplayType; the total-value ones answer one number per series over the whole range. */
export const DISPLAYS: ReadonlySet<string> = new Set([
  'ActionsLineGraph',
  'ActionsLineGraphCumulative',
  'ActionsAreaGraph',
  'ActionsBar',
  'ActionsStackedBar',
  'ActionsTable',
  'ActionsPie',
  'ActionsBarValue',
  'WorldMap',
  'BoldNumber',
  'CalendarHeatmap',
]);
export const TOTAL_VALUE_DISPLAYS: ReadonlySet<string> = new Set([
  'ActionsTable',
  'ActionsPie',
  'ActionsBarValue',
  'WorldMap',
  'BoldNumber',
  'CalendarHeatmap',
]);

/** A world map shows every country: PostHog lifts the default breakdown_limit to 300 there. */
export const WORLD_MAP_BREAKDOWN_LIMIT = 300;

export interface ParsedTrendFilter extends QueryFilterBase {
  display: string;
  breakdown_hide_other_aggregation: boolean;
  compare: boolean;
  compare_to: string | null;
  formula: string | null;
  smoothing_intervals: number;
}

/**
 * Checks a legacy trend filter (GET and POST /insights/trend/, stored insight filters) and
 * answers it normalised (parseQueryFilterBase), with the trend's own fields: display, formula,
 * comparison, smoothing. Anything unknown is a 400 naming the field.
 */
export function parseTrendFilter(input: unknown): ParsedTrendFilter {
  if (!isJsonObject(input)) throw new QueryFilterError(null, 'The trend query must be a JSON object.', 'parse_error');
  const body = input;
  const base = parseQueryFilterBase(body, { defaultBreakdownLimit: body['display'] === 'WorldMap' ? WORLD_MAP_BREAKDOWN_LIMIT : undefined });
  const display = optionalString(body, 'display') ?? 'ActionsLineGraph';
  if (!DISPLAYS.has(display))
    throw new QueryFilterError('display', `Unknown display "${display.slice(0, 100)}" (one of: ${[...DISPLAYS].join(', ')}).`, 'invalid_choice');
  return {
    ...base,
    display,
    breakdown_hide_other_aggregation: optionalBoolean(body, 'breakdown_hide_other_aggregation'),
    compare: optionalBoolean(body, 'compare'),
    compare_to: optionalString(body, 'compare_to'),
    formula: optionalString(body, 'formula'),
    smoothing_intervals: optionalInteger(body, 'smoothing_intervals', 1, 365) ?? 1,
  };
}
