import { isJsonObject } from '@sightline/json-input';
import { re2Problem, type PropertyGroup } from '@sightline/properties';
import { isEmpty, optionalBoolean, optionalInteger, optionalString, propertyGroup } from '../common/filter-fields';
import { MAX_FILTER_CHARS } from '../common/query-filter-base';
import { QueryFilterError } from '../common/query-filter-error';

/** PostHog's PathType values (posthog/schema.py): what kinds of events become path items. */
export const PATH_TYPES = ['$pageview', '$screen', 'custom_event', 'hogql'] as const;
export type PathType = (typeof PATH_TYPES)[number];

/** PostHog's EVENT_IN_SESSION_LIMIT_DEFAULT and EDGE_LIMIT_DEFAULT (paths_query_runner.py). */
export const DEFAULT_STEP_LIMIT = 5;
export const DEFAULT_EDGE_LIMIT = 50;
/**
 * The most steps per session path and edges per answer: PostHog's app offers up to 20 steps;
 * larger values only make every person's arrays and the answer bigger (docs/behaviours.md).
 */
export const MAX_STEP_LIMIT = 50;
export const MAX_EDGE_LIMIT = 10_000;
/** The most groupings, cleaning rules and excluded items one query may name: each is a pattern ClickHouse compiles. */
export const MAX_PATH_PATTERNS = 100;
const MAX_ITEM_CHARS = 2_000;

/** One `localPathCleaningFilters` rule: every match of `regex` (RE2) in a path item is replaced by `alias`. */
export interface PathCleaningRule {
  regex: string;
  alias: string;
}

/** A paths query, checked (PostHog's PathsQuery with its PathsFilter; the legacy PATHS filter reads into it). */
export interface ParsedPathsFilter {
  includeEventTypes: PathType[];
  pathsHogQLExpression: string | null;
  startPoint: string | null;
  endPoint: string | null;
  stepLimit: number;
  edgeLimit: number;
  minEdgeWeight: number | null;
  maxEdgeWeight: number | null;
  pathGroupings: string[];
  excludeEvents: string[];
  localPathCleaningFilters: PathCleaningRule[];
  properties: PropertyGroup;
  filter_test_accounts: boolean;
  date_from: string | null;
  date_to: string | null;
  explicit_date: boolean;
}

/** Which persons of a paths query are asked for (PostHog's pathStartKey / pathEndKey / pathDropoffKey). */
export interface PathsActorsKeys {
  pathStartKey: string | null;
  pathEndKey: string | null;
  pathDropoffKey: string | null;
}

const fail = (attr: string, message: string, code = 'invalid'): never => {
  throw new QueryFilterError(attr, message, code);
};

function textList(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  if (isEmpty(value)) return [];
  if (!Array.isArray(value)) return fail(key, `${key} must be a list.`, 'not_a_list');
  if (value.length > MAX_PATH_PATTERNS) fail(key, `At most ${MAX_PATH_PATTERNS} entries are allowed in ${key}; got ${value.length}.`, 'max_length');
  return value.map((item) => {
    if (typeof item !== 'string') return fail(key, `Each entry of ${key} must be a text.`);
    if (item.length > MAX_ITEM_CHARS) fail(key, `Each entry of ${key} may hold at most ${MAX_ITEM_CHARS} characters.`, 'max_length');
    return item;
  });
}

function optionalText(body: Record<string, unknown>, key: string): string | null {
  const value = optionalString(body, key);
  if (value !== null && value.length > MAX_ITEM_CHARS) fail(key, `${key} may hold at most ${MAX_ITEM_CHARS} characters.`, 'max_length');
  return value;
}

function cleaningRules(body: Record<string, unknown>): PathCleaningRule[] {
  const key = 'local_path_cleaning_filters';
  const value = body[key];
  if (isEmpty(value)) return [];
  if (!Array.isArray(value)) return fail(key, `${key} must be a list.`, 'not_a_list');
  if (value.length > MAX_PATH_PATTERNS) fail(key, `At most ${MAX_PATH_PATTERNS} cleaning rules are allowed; got ${value.length}.`, 'max_length');
  return value.flatMap((rule, i) => {
    const attr = `${key}__${i}`;
    if (!isJsonObject(rule)) return fail(attr, 'Each cleaning rule must be an object {regex, alias}.');
    const regex = rule['regex'] ?? null;
    const alias = rule['alias'] ?? null;
    if ((regex !== null && typeof regex !== 'string') || (alias !== null && typeof alias !== 'string')) {
      return fail(attr, 'A cleaning rule has a text `regex` and a text `alias`.');
    }
    // PostHog's PathCleaningFilter allows either to be missing; a rule without a pattern changes nothing.
    if (!regex) return [];
    if (regex.length > MAX_ITEM_CHARS || (alias ?? '').length > MAX_ITEM_CHARS)
      fail(attr, `A cleaning rule may hold at most ${MAX_ITEM_CHARS} characters per field.`, 'max_length');
    // ClickHouse's replaceRegexpAll compiles the pattern with RE2, as flags and regex filters do.
    const problem = re2Problem(regex);
    if (problem !== null) fail(attr, `The cleaning rule's regex is not a valid RE2 pattern: ${problem}`, 'invalid_regex');
    return [{ regex, alias: alias ?? '' }];
  });
}

function includeTypes(body: Record<string, unknown>): PathType[] {
  // PostHog's legacy `path_type` (one type) stands for include_event_types of that type alone.
  const legacyType = optionalString(body, 'path_type');
  const key = legacyType === null ? 'include_event_types' : 'path_type';
  const list = legacyType === null ? textList(body, key) : [legacyType];
  for (const type of list) {
    if (!(PATH_TYPES as readonly string[]).includes(type)) {
      fail(key, `Unknown path type ${JSON.stringify(type.slice(0, 60))} (one of: ${PATH_TYPES.join(', ')}).`, 'invalid_choice');
    }
  }
  return [...new Set(list)] as PathType[];
}

/**
 * PostHog's legacy PATHS filter (the fields filter_to_query.py reads into a PathsFilter), checked.
 * A limit of 0 or none takes PostHog's default (`stepLimit or 5`, `edgeLimit or 50`); edge weights
 * of 0 or none do not filter. Funnel paths, sampling and the project's own cleaning rules are not
 * served (docs/behaviours.md): asking for them is a 400 rather than an unfiltered answer.
 */
export function parsePathsFilter(body: Record<string, unknown>): ParsedPathsFilter {
  if (!isEmpty(body['funnel_paths']) || !isEmpty(body['funnel_filter'])) {
    fail(isEmpty(body['funnel_paths']) ? 'funnel_filter' : 'funnel_paths', 'Paths through a funnel (funnel_paths) are not supported.', 'not_supported');
  }
  const sampling = body['sampling_factor'];
  if (!isEmpty(sampling) && sampling !== 1) fail('sampling_factor', 'Sampling is not supported: paths read every event.', 'not_supported');
  const properties = propertyGroup(body['properties'], 'properties');
  const filter: ParsedPathsFilter = {
    includeEventTypes: includeTypes(body),
    pathsHogQLExpression: optionalText(body, 'paths_hogql_expression'),
    startPoint: optionalText(body, 'start_point'),
    endPoint: optionalText(body, 'end_point'),
    stepLimit: optionalInteger(body, 'step_limit', 0, MAX_STEP_LIMIT) || DEFAULT_STEP_LIMIT,
    edgeLimit: optionalInteger(body, 'edge_limit', 0, MAX_EDGE_LIMIT) || DEFAULT_EDGE_LIMIT,
    minEdgeWeight: optionalInteger(body, 'min_edge_weight', 0, Number.MAX_SAFE_INTEGER) || null,
    maxEdgeWeight: optionalInteger(body, 'max_edge_weight', 0, Number.MAX_SAFE_INTEGER) || null,
    pathGroupings: textList(body, 'path_groupings'),
    excludeEvents: textList(body, 'exclude_events'),
    localPathCleaningFilters: cleaningRules(body),
    properties,
    filter_test_accounts: optionalBoolean(body, 'filter_test_accounts'),
    date_from: optionalString(body, 'date_from'),
    date_to: optionalString(body, 'date_to'),
    explicit_date: optionalBoolean(body, 'explicit_date'),
  };
  // path_replacements applies the project's own cleaning rules in PostHog; Sightline projects have none.
  optionalBoolean(body, 'path_replacements');
  const chars = JSON.stringify(body['properties'] ?? null).length;
  if (chars > MAX_FILTER_CHARS) fail('properties', `Property filters hold ${chars} characters; at most ${MAX_FILTER_CHARS} are allowed.`, 'max_length');
  return filter;
}

function optionalKey(body: Record<string, unknown>, key: string, attr: string): string | null {
  const value = body[key];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > MAX_ITEM_CHARS + 20) return fail(attr, `${key} must be a path key such as "2_/pricing".`);
  return value;
}

/** The actor keys of a PathsFilter (query node spelling) or a legacy filter (snake case). */
export function parsePathsActorsKeys(body: Record<string, unknown>, legacy: boolean, attrPrefix = ''): PathsActorsKeys {
  const name = (camel: string, snake: string) => (legacy ? snake : camel);
  return {
    pathStartKey: optionalKey(body, name('pathStartKey', 'path_start_key'), `${attrPrefix}${name('pathStartKey', 'path_start_key')}`),
    pathEndKey: optionalKey(body, name('pathEndKey', 'path_end_key'), `${attrPrefix}${name('pathEndKey', 'path_end_key')}`),
    pathDropoffKey: optionalKey(body, name('pathDropoffKey', 'path_dropoff_key'), `${attrPrefix}${name('pathDropoffKey', 'path_dropoff_key')}`),
  };
}
