import { findInputProblem, isJsonObject } from '@sightline/json-input';
import type { PropertyGroup } from '@sightline/properties';
import { DEFAULT_BREAKDOWN_LIMIT, parseBreakdowns } from '../common/breakdowns';
import type { BreakdownInput } from '../common/events-sql';
import { isEmpty, optionalBoolean, optionalInteger, optionalString, propertyGroup } from '../common/filter-fields';
import { QueryFilterError } from '../common/query-filter-error';
import { breakdownLimit } from '../common/breakdowns';

/** PostHog's RetentionPeriod, and the interval each reads as. */
export const RETENTION_PERIODS = ['Hour', 'Day', 'Week', 'Month'] as const;
export type RetentionPeriod = (typeof RETENTION_PERIODS)[number];
/**
 * The retention types PostHog's HogQL runner computes (retention_query_runner.py): recurring
 * (every interval with a target event starts a cohort) and first time (only the interval of
 * the actor's first-ever target event).
 */
export const RETENTION_TYPES = ['retention_recurring', 'retention_first_time'] as const;
export type RetentionType = (typeof RETENTION_TYPES)[number];

/** PostHog's RetentionFilter.totalIntervals default (posthog/schema.py). */
export const DEFAULT_TOTAL_INTERVALS = 11;
/**
 * The most intervals looked ahead. PostHog's editor offers up to a few dozen; the answer holds
 * rows × intervals cells, so this and the row bound (retention-date-range.ts) keep it small.
 */
export const MAX_TOTAL_INTERVALS = 1_000;
const BREAKDOWN_TYPES_SERVED: ReadonlySet<string> = new Set(['event', 'person', 'group', 'cohort']);

/** A target or returning entity: an event (null: any event) or an action, with its own filters. */
export interface RetentionEntity {
  kind: 'events' | 'actions';
  id: string | number | null;
  name: string | null;
  properties: PropertyGroup;
}

/** A retention query, checked: what PostHog's RetentionQuery holds, in one shape for both APIs. */
export interface ParsedRetentionFilter {
  target: RetentionEntity;
  returning: RetentionEntity;
  retentionType: RetentionType;
  period: RetentionPeriod;
  totalIntervals: number;
  /** A return interval counts only with at least this many returning events in it (PostHog's minimumOccurrences). */
  minimumOccurrences: number;
  /** Rolling retention: an actor back in interval N counts in every interval before it too. */
  cumulative: boolean;
  date_from: string | null;
  date_to: string | null;
  properties: PropertyGroup;
  filter_test_accounts: boolean;
  /** At most one property breakdown, or cohorts (one entry per cohort). */
  breakdowns: BreakdownInput[];
  breakdown_limit: number;
  aggregation_group_type_index: number | null;
}

/** PostHog's DEFAULT_ENTITY of the retention runner: `$pageview`. */
const DEFAULT_ENTITY: RetentionEntity = { kind: 'events', id: '$pageview', name: '$pageview', properties: { type: 'AND', values: [] } };

function choice<T extends string>(body: Record<string, unknown>, key: string, choices: readonly T[], fallback: T): T {
  const value = body[key];
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw new QueryFilterError(key, `"${String(value).slice(0, 40)}" is not a valid choice (one of: ${choices.join(', ')}).`, 'invalid_choice');
  }
  return value as T;
}

/** A JSON object sent as a string (the legacy GET form), else the value as it is. */
function objectOrJson(value: unknown, attr: string): unknown {
  if (typeof value !== 'string' || !/^\s*\{/.test(value)) return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value) as unknown;
  } catch {
    throw new QueryFilterError(attr, `${attr} is not valid JSON.`, 'parse_error');
  }
  // Parsed here, after the request's own checks saw a string: its depth and values are checked again.
  const problem = findInputProblem(parsed, undefined, attr);
  if (problem) throw new QueryFilterError(problem.attr, problem.detail, problem.code);
  return parsed;
}

/** A RetentionEntity (legacy `target_entity` or the node's `targetEntity`); absent: `$pageview`. */
function parseEntity(raw: unknown, attr: string): RetentionEntity {
  const value = objectOrJson(raw, attr);
  if (value === undefined || value === null) return DEFAULT_ENTITY;
  if (!isJsonObject(value)) throw new QueryFilterError(attr, `${attr} must be an entity object {id, type}.`, 'invalid');
  const isAction = value['type'] === 'actions' || value['kind'] === 'ActionsNode';
  const id = value['id'];
  let parsedId: string | number | null;
  if (isAction) {
    const n = typeof id === 'string' && /^\d{1,10}$/.test(id) ? Number(id) : id;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 2_147_483_647)
      throw new QueryFilterError(`${attr}__id`, 'An action entity needs the action id.', 'invalid');
    parsedId = n;
  } else {
    if (id !== undefined && id !== null && typeof id !== 'string')
      throw new QueryFilterError(`${attr}__id`, 'An event entity id must be the event name, or null for all events.', 'invalid');
    parsedId = (id as string | null | undefined) ?? null;
  }
  const name = value['name'];
  return {
    kind: isAction ? 'actions' : 'events',
    id: parsedId,
    name: typeof name === 'string' ? name : parsedId === null ? 'All events' : String(parsedId),
    properties: propertyGroup(value['properties'], `${attr}__properties`),
  };
}

/**
 * PostHog's retention filter in its legacy form (insights/retention/, saved insights' `filters`):
 * `target_entity`, `returning_entity`, `retention_type`, `period`, `total_intervals`, the dates,
 * property filters, a breakdown and the aggregation group. A RetentionQuery node is read into this
 * form first (retentionQueryToFilter). Anything wrong is a 400 naming the field.
 */
export function parseRetentionFilter(input: unknown): ParsedRetentionFilter {
  if (!isJsonObject(input)) throw new QueryFilterError(null, 'The retention query must be a JSON object.', 'parse_error');
  const body = input;
  const retentionType = body['retention_type'];
  if (retentionType === 'retention_first_ever_occurrence') {
    throw new QueryFilterError(
      'retention_type',
      'retention_first_ever_occurrence is not supported (retention_recurring, retention_first_time).',
      'not_supported',
    );
  }
  // PostHog's retention reads any breakdown that is not a person, group or cohort one from the
  // event's properties (retention_query_runner.py, breakdown_extract_expr): event_metadata too.
  const breakdowns = parseBreakdowns(body).map((b) => (b.type === 'event_metadata' ? { ...b, type: 'event' } : b));
  const propertyBreakdowns = breakdowns.filter((b) => b.type !== 'cohort');
  for (const b of breakdowns) {
    if (!BREAKDOWN_TYPES_SERVED.has(b.type))
      throw new QueryFilterError(
        'breakdown_type',
        `Retention breaks down by event (or event_metadata), person or group properties, or cohorts; not "${b.type}".`,
        'not_supported',
      );
    if (b.histogram_bin_count !== null || b.normalize_url)
      throw new QueryFilterError('breakdown', 'Retention breakdowns take no histogram bins or URL normalising.', 'not_supported');
  }
  // PostHog's retention breaks down by its first breakdown only (retention_query_runner.py, "supporting only single breakdowns").
  if (propertyBreakdowns.length > 1) throw new QueryFilterError('breakdowns', 'Retention breaks down by one property.', 'max_length');
  if (propertyBreakdowns.length > 0 && propertyBreakdowns.length !== breakdowns.length)
    throw new QueryFilterError('breakdowns', 'A retention breakdown is by a property or by cohorts, not both.', 'invalid');
  return {
    target: parseEntity(body['target_entity'], 'target_entity'),
    returning: parseEntity(body['returning_entity'], 'returning_entity'),
    retentionType: choice(body, 'retention_type', RETENTION_TYPES, 'retention_recurring'),
    period: choice(body, 'period', RETENTION_PERIODS, 'Day'),
    totalIntervals: optionalInteger(body, 'total_intervals', 1, MAX_TOTAL_INTERVALS) ?? DEFAULT_TOTAL_INTERVALS,
    minimumOccurrences: optionalInteger(body, 'minimum_occurrences', 1, 1_000_000) ?? 1,
    cumulative: optionalBoolean(body, 'cumulative'),
    date_from: optionalString(body, 'date_from'),
    date_to: optionalString(body, 'date_to'),
    properties: propertyGroup(body['properties'], 'properties'),
    filter_test_accounts: optionalBoolean(body, 'filter_test_accounts'),
    breakdowns,
    breakdown_limit: breakdownLimit(optionalInteger(body, 'breakdown_limit', 1, Number.MAX_SAFE_INTEGER)) ?? DEFAULT_BREAKDOWN_LIMIT,
    aggregation_group_type_index: optionalInteger(body, 'aggregation_group_type_index', 0, 4),
  };
}

/** The fields of a RetentionQuery's retentionFilter, by their legacy names. */
const RETENTION_FILTER_RENAMES: Record<string, string> = {
  targetEntity: 'target_entity',
  returningEntity: 'returning_entity',
  retentionType: 'retention_type',
  period: 'period',
  totalIntervals: 'total_intervals',
  minimumOccurrences: 'minimum_occurrences',
  cumulative: 'cumulative',
};

/** A RetentionQuery node (PostHog's query API) read as the legacy retention filter. */
export function retentionQueryToFilter(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const dateRange = isJsonObject(query['dateRange']) ? query['dateRange'] : {};
  if (dateRange['date_from'] !== undefined) out['date_from'] = dateRange['date_from'];
  if (dateRange['date_to'] !== undefined) out['date_to'] = dateRange['date_to'];
  if (query['properties'] !== undefined) out['properties'] = query['properties'];
  if (query['filterTestAccounts'] !== undefined) out['filter_test_accounts'] = query['filterTestAccounts'];
  if (query['aggregation_group_type_index'] !== undefined) out['aggregation_group_type_index'] = query['aggregation_group_type_index'];
  const retention = query['retentionFilter'];
  if (retention !== undefined && retention !== null && !isJsonObject(retention))
    throw new QueryFilterError('retentionFilter', 'retentionFilter must be an object.', 'invalid');
  for (const [from, to] of Object.entries(RETENTION_FILTER_RENAMES)) {
    const value = (retention ?? {})[from];
    if (value !== undefined) out[to] = value;
  }
  const breakdown = query['breakdownFilter'];
  if (isJsonObject(breakdown)) {
    for (const key of ['breakdown', 'breakdown_type', 'breakdowns', 'breakdown_limit', 'breakdown_group_type_index']) {
      if (!isEmpty(breakdown[key])) out[key] = breakdown[key];
    }
  }
  return out;
}
