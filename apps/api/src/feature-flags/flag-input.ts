import { compileRegex, FLAG_PROPERTY_OPERATORS } from '@sightline/flags';
import { errors } from '@sightline/http';
import { findInputProblem, isJsonObject } from '@sightline/json-input';
import { echoed, INT4_MAX, parseBody, parseBoolean, parseChoice, parseDict, parseInteger, parseList, parseString } from '../http/drf-fields';

export const CREATION_CONTEXTS = ['feature_flags', 'experiments', 'surveys', 'early_access_features', 'web_experiments', 'product_tours'] as const;
export const EVALUATION_RUNTIMES = ['server', 'client', 'all'] as const;
const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/;
const MAX_PROPERTY_VALUES = 1000;
const STRING_VALUE_OPERATORS = new Set(['regex', 'icontains', 'not_regex', 'not_icontains', 'gte', 'lte', 'gt', 'lt']);
const RELATIVE_DATE = /^-?\d+[hdwmyHDWMY]$/;
/** PostHog's FeatureFlag.key max_length. */
export const MAX_FLAG_KEY_LENGTH = 400;
/** PostHog's Tag.name max_length. */
export const MAX_TAG_LENGTH = 255;
/**
 * PostHog's FeatureFlag.name is an unbounded TextField (the UI shows it as the description);
 * Sightline bounds it generously, so no single flag makes every list and decide answer heavy.
 */
export const MAX_FLAG_NAME_LENGTH = 65_535;
/** PostHog's PropertyDefinition.name max_length: the longest property key a filter can name. */
const MAX_PROPERTY_KEY_LENGTH = 400;
/** Group type indexes a project can have (PostHog allows five group types). */
const MAX_GROUP_TYPE_INDEX = 4;
const isInt4Id = (value: number) => Number.isInteger(value) && value >= 1 && value <= INT4_MAX;

/** The writable fields of a feature flag, as validated from a request body. */
export interface FlagInput {
  name?: string;
  key?: string;
  filters?: Record<string, unknown>;
  deleted?: boolean;
  active?: boolean;
  ensure_experience_continuity?: boolean;
  rollback_conditions?: unknown;
  performed_rollback?: boolean;
  tags?: string[];
  analytics_dashboards?: number[];
  has_enriched_analytics?: boolean;
  creation_context?: (typeof CREATION_CONTEXTS)[number];
  evaluation_runtime?: (typeof EVALUATION_RUNTIMES)[number];
  /** Create only: PostHog's `_should_create_usage_dashboard` (default true). */
  create_usage_dashboard?: boolean;
  /** Update only: the version the client edited, for the stale-edit check. */
  version?: number;
  /** Update only: the flag as the client loaded it (PostHog's conflict check). */
  original_flag?: Record<string, unknown>;
}

export interface FlagRef {
  id: number;
  key: string;
  active: boolean;
  filters: Record<string, unknown>;
}

/** The lookups validation needs; the route backs them with SQL, unit tests with fakes. */
export interface FlagValidationContext {
  /** PUT is DRF's full update: like PATCH, but the required key must be sent. */
  method: 'POST' | 'PATCH' | 'PUT';
  /** The flag being updated (PATCH, PUT). */
  current?: { id: number; key: string; filters: Record<string, unknown> };
  /** Is `key` used by another non-deleted flag of the project? */
  keyTaken(key: string, exceptFlagId?: number): Promise<boolean>;
  cohortExists(id: number): Promise<boolean>;
  /** A non-deleted flag of the project, by id or key. */
  findFlag(idOrKey: number | string): Promise<FlagRef | null>;
  /** The ids among `ids` that are not dashboards of the project. */
  missingDashboards(ids: number[]): Promise<number[]>;
}

const invalidFilters = (detail: string, code = 'invalid') => errors.validation(detail, 'filters', code);

interface PropertyFilter {
  key?: unknown;
  type: string;
  operator?: unknown;
  value?: unknown;
  group_type_index?: unknown;
}

function conditionsOf(filters: Record<string, unknown>): Record<string, unknown>[] {
  const groups = filters['groups'];
  if (groups === undefined || groups === null) return [];
  if (!Array.isArray(groups) || !groups.every(isJsonObject)) throw invalidFilters('Filters are not valid (groups must be a list of condition sets)');
  return groups;
}

function propertiesOf(condition: Record<string, unknown>): PropertyFilter[] {
  const properties = condition['properties'] ?? [];
  if (!Array.isArray(properties) || !properties.every(isJsonObject)) throw invalidFilters('Filters are not valid (properties must be a list of filters)');
  // PostHog's Property defaults the type to "event".
  return properties.map((p) => ({ ...p, type: typeof p['type'] === 'string' ? p['type'] : 'event' }));
}

function isValidDateValue(value: unknown): boolean {
  if (typeof value !== 'string' || value.trim() === '') return false;
  return RELATIVE_DATE.test(value.trim()) || !Number.isNaN(Date.parse(value));
}

/**
 * `multivariate`: null, or a dictionary whose `variants` is a list of {key, rollout_percentage}
 * with distinct string keys. The engine iterates these on every decide: a shape it cannot read
 * would fail the flag for every caller, so it is refused here.
 */
function variantsOf(filters: Record<string, unknown>): Record<string, unknown>[] {
  const multivariate = filters['multivariate'];
  if (multivariate === undefined || multivariate === null) return [];
  if (!isJsonObject(multivariate)) throw invalidFilters('Filters are not valid (multivariate must be a dictionary with a list of variants)');
  const variants = multivariate['variants'] ?? [];
  if (!Array.isArray(variants)) throw invalidFilters('Filters are not valid (multivariate variants must be a list)');
  if (!variants.every((v) => isJsonObject(v) && typeof v['key'] === 'string' && v['key'] !== '')) {
    throw invalidFilters('Filters are not valid (every variant needs a key)');
  }
  // Variant keys are answered to SDKs beside flag keys: the same length bound.
  if (variants.some((v) => (v['key'] as string).length > MAX_FLAG_KEY_LENGTH)) {
    throw invalidFilters(`Filters are not valid (variant keys have at most ${MAX_FLAG_KEY_LENGTH} characters)`, 'max_length');
  }
  const keys = variants.map((v) => (v as Record<string, unknown>)['key'] as string);
  if (new Set(keys).size !== keys.length) throw invalidFilters('Filters are not valid (variant keys must be unique)');
  for (const variant of variants as Record<string, unknown>[]) {
    if (typeof variant['rollout_percentage'] !== 'number') {
      throw invalidFilters('Invalid variant definitions: every variant needs a rollout_percentage between 0 and 100.', 'invalid_input');
    }
  }
  return variants as Record<string, unknown>[];
}

/** Condition lists beside `groups` (super_groups, holdout_groups): a list of condition sets when present. */
function checkConditionList(filters: Record<string, unknown>, field: string) {
  const list = filters[field];
  if (list === undefined || list === null) return;
  if (!Array.isArray(list) || !list.every(isJsonObject)) throw invalidFilters(`Filters are not valid (${field} must be a list of condition sets)`);
  list.forEach((condition) => {
    propertiesOf(condition).forEach(checkPropertyShape);
    checkRollout(condition['rollout_percentage'], 'condition');
  });
}

/** A property filter the engine can evaluate: a string key, a known operator, a pattern RE2 compiles. */
function checkPropertyShape(property: PropertyFilter) {
  if (property.type !== 'cohort' && (typeof property.key !== 'string' || property.key === '') && property.type !== 'flag') {
    throw invalidFilters('Filters are not valid (every property filter needs a key)');
  }
  if (typeof property.key === 'string' && property.key.length > MAX_PROPERTY_KEY_LENGTH) {
    throw invalidFilters(`Filters are not valid (property keys have at most ${MAX_PROPERTY_KEY_LENGTH} characters)`, 'max_length');
  }
  if (property.operator !== undefined && property.operator !== null) {
    if (typeof property.operator !== 'string' || !FLAG_PROPERTY_OPERATORS.has(property.operator)) {
      throw invalidFilters(`Invalid operator "${echoed(property.operator)}" for property ${echoed(property.key)}.`, 'invalid_operator');
    }
  }
  if ((property.operator === 'regex' || property.operator === 'not_regex') && typeof property.value === 'string' && compileRegex(property.value) === null) {
    throw invalidFilters(
      `Invalid regex pattern for property ${echoed(property.key)}: the pattern must use RE2 syntax (no look-arounds or back-references).`,
      'invalid_value',
    );
  }
}

/** `between` bounds: two numbers, or numeric text the engine parses at evaluation. */
const isRangePair = (value: unknown) => Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'number' || typeof v === 'string');

function checkRollout(value: unknown, what: string) {
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) {
    throw invalidFilters(`Invalid ${what} rollout percentage: must be a number between 0 and 100.`, 'invalid_input');
  }
}

/** Flag ids a condition depends on (properties of type "flag"). */
export function flagDependencies(filters: Record<string, unknown>): unknown[] {
  const groups = Array.isArray(filters['groups']) ? filters['groups'] : [];
  return groups.flatMap((g) =>
    isJsonObject(g) && Array.isArray(g['properties'])
      ? g['properties'].filter((p) => isJsonObject(p) && p['type'] === 'flag').map((p) => (p as Record<string, unknown>)['key'])
      : [],
  );
}

async function dependencyKeys(filters: Record<string, unknown>, ctx: FlagValidationContext): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const reference of flagDependencies(filters)) {
    const id = typeof reference === 'number' ? reference : typeof reference === 'string' && /^\d+$/.test(reference) ? Number(reference) : null;
    if (id === null) {
      throw invalidFilters(`Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: '${echoed(reference)}'`);
    }
    const flag = await ctx.findFlag(id);
    if (!flag) throw invalidFilters(`Flag dependency references non-existent flag with ID ${id}`);
    if (!flag.active) {
      throw invalidFilters(`Cannot create dependency on disabled flag '${flag.key}' (ID: ${id}). Flag dependencies must reference active flags only.`);
    }
    keys.add(flag.key);
  }
  return keys;
}

async function checkCircularDependencies(flagKey: string | undefined, filters: Record<string, unknown>, ctx: FlagValidationContext) {
  if (!flagKey) return;
  const direct = await dependencyKeys(filters, ctx);
  if (direct.has(flagKey)) throw invalidFilters(`Feature flag '${flagKey}' cannot depend on itself`);
  const visit = async (key: string, path: string[]): Promise<void> => {
    if (path.includes(key)) throw invalidFilters(`Circular dependency detected: ${[...path.slice(path.indexOf(key)), key].join(' → ')}`);
    const flag = await ctx.findFlag(key);
    if (!flag) return;
    for (const next of await dependencyKeys(flag.filters, ctx)) await visit(next, [...path, key]);
  };
  for (const key of direct) await visit(key, [flagKey]);
}

/** PostHog's FeatureFlagSerializer.validate_filters, in its order. Returns the filters to store. */
export async function validateFilters(raw: unknown, flagKey: string | undefined, ctx: FlagValidationContext): Promise<Record<string, unknown>> {
  const filters = parseDict(raw, 'filters');
  // DRF validates `filters` on an update even when the client sent no groups: PostHog then
  // keeps the stored filters.
  if (!('groups' in filters) && ctx.method !== 'POST' && ctx.current) return ctx.current.filters;
  const conditions = conditionsOf(filters);
  if (ctx.method === 'POST' && conditions.length === 0) throw invalidFilters('Feature flags must have at least one condition set (group).');

  const groupTypeIndex = filters['aggregation_group_type_index'] ?? null;
  if (groupTypeIndex !== null && !(Number.isInteger(groupTypeIndex) && (groupTypeIndex as number) >= 0 && (groupTypeIndex as number) <= MAX_GROUP_TYPE_INDEX)) {
    throw invalidFilters(`Filters are not valid (aggregation_group_type_index must be an integer from 0 to ${MAX_GROUP_TYPE_INDEX})`);
  }
  const allProperties = conditions.flatMap(propertiesOf);
  if (groupTypeIndex === null) {
    if (!allProperties.every((p) => ['person', 'cohort', 'flag'].includes(p.type))) {
      throw invalidFilters('Filters are not valid (can only use person, cohort, and flag properties)');
    }
    if (!allProperties.every((p) => p.type !== 'flag' || p.operator === 'flag_evaluates_to')) {
      throw invalidFilters("Flag properties must use the 'flag_evaluates_to' operator");
    }
    await checkCircularDependencies(flagKey ?? ctx.current?.key, filters, ctx);
  } else if (!allProperties.every((p) => p.type === 'group' && p.group_type_index === groupTypeIndex)) {
    throw invalidFilters('Filters are not valid (can only use group properties)');
  }

  const multivariate = filters['multivariate'];
  const variants = variantsOf(filters);
  checkConditionList(filters, 'super_groups');
  checkConditionList(filters, 'holdout_groups');
  const variantKeys = new Set(variants.map((v) => v['key'] as string));
  if (variants.length > 0) {
    variants.forEach((v) => checkRollout(v['rollout_percentage'], 'variant'));
    const sum = variants.reduce((total, v) => total + (typeof v['rollout_percentage'] === 'number' ? v['rollout_percentage'] : 0), 0);
    if (sum !== 100) throw invalidFilters('Invalid variant definitions: Variant rollout percentages must sum to 100.', 'invalid_input');
  }

  for (const condition of conditions) {
    checkRollout(condition['rollout_percentage'], 'condition');
    if (condition['variant'] && !variantKeys.has(condition['variant'] as string)) {
      throw invalidFilters('Filters are not valid (variant override does not exist)');
    }
    for (const property of propertiesOf(condition)) {
      checkPropertyShape(property);
      if (Array.isArray(property.value) && property.value.length > MAX_PROPERTY_VALUES) {
        throw invalidFilters(`Property group expressions of type ${echoed(property.key)} cannot contain more than ${MAX_PROPERTY_VALUES} values.`);
      }
      if (property.type === 'cohort') {
        const id = Number(property.value);
        if (!isInt4Id(id) || !(await ctx.cohortExists(id))) {
          throw invalidFilters(`Cohort with id ${echoed(property.value)} does not exist`, 'cohort_does_not_exist');
        }
      }
      if ((property.operator === 'is_date_before' || property.operator === 'is_date_after') && !isValidDateValue(property.value)) {
        throw invalidFilters(`Invalid date value: ${echoed(property.value)}`, 'invalid_date');
      }
      if (typeof property.operator === 'string' && STRING_VALUE_OPERATORS.has(property.operator) && typeof property.value !== 'string') {
        throw invalidFilters(`Invalid value for operator ${property.operator}: ${echoed(property.value)}`, 'invalid_value');
      }
      if ((property.operator === 'in' || property.operator === 'not_in') && property.type !== 'cohort') {
        throw invalidFilters(`The '${property.operator}' operator is only valid for cohort properties, not '${property.type}' properties.`, 'invalid_operator');
      }
      // Beyond PostHog's serializer: a range the flag service could never read is refused
      // rather than stored as a condition that silently never holds.
      if ((property.operator === 'between' || property.operator === 'not_between') && !isRangePair(property.value)) {
        throw invalidFilters(`Invalid value for operator ${property.operator}: expected [low, high], got ${echoed(property.value)}`, 'invalid_value');
      }
    }
  }

  const payloads = filters['payloads'] ?? {};
  if (!isJsonObject(payloads)) throw invalidFilters('Payloads must be passed as a dictionary');
  const normalisedPayloads: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payloads)) {
    if (typeof value === 'string') {
      try {
        JSON.parse(value);
      } catch {
        throw invalidFilters('Payload value is not valid JSON');
      }
      normalisedPayloads[key] = value;
    } else {
      // JSON object payloads (typical from the API) are stored as JSON text, as the UI sends them.
      normalisedPayloads[key] = isJsonObject(value) ? JSON.stringify(value) : value;
    }
  }
  if (multivariate) {
    if (!Object.keys(normalisedPayloads).every((k) => variantKeys.has(k))) throw invalidFilters('Payload keys must match a variant key for multivariate flags');
  } else if (Object.keys(normalisedPayloads).length > 1 || Object.keys(normalisedPayloads).some((k) => k !== 'true')) {
    throw invalidFilters("Payload keys must be 'true' for boolean flags");
  }
  return 'payloads' in filters ? { ...filters, payloads: normalisedPayloads } : filters;
}

/**
 * Validates a create (POST) or partial update (PATCH) body field by field, in the order
 * DRF reports them, and answers the first problem as PostHog's 400 body.
 */
export async function parseFlagInput(rawBody: unknown, ctx: FlagValidationContext): Promise<FlagInput> {
  const body = parseBody(rawBody);
  // The /api guard checks every body first; validation checks again so that it never walks
  // (or stores) what the guard refuses, whoever calls it: depth past 64 levels, NULs, lone
  // surrogates, numbers that lost their digits, strings past the input limit.
  const problem = findInputProblem(body);
  if (problem) throw errors.validation(problem.detail, problem.attr, problem.code);
  const input: FlagInput = {};
  const has = (field: string) => field in body && body[field] !== undefined;

  if (has('name')) input.name = parseString(body['name'], 'name', { allowBlank: true, maxLength: MAX_FLAG_NAME_LENGTH });
  if (has('key')) {
    const key = parseString(body['key'], 'key', { maxLength: MAX_FLAG_KEY_LENGTH });
    if (await ctx.keyTaken(key, ctx.current?.id)) throw errors.validation('There is already a feature flag with this key.', 'key', 'unique');
    if (!KEY_PATTERN.test(key)) throw errors.validation('Only letters, numbers, hyphens (-) & underscores (_) are allowed.', 'key', 'invalid_key');
    input.key = key;
  } else if (ctx.method !== 'PATCH') {
    throw errors.validation('This field is required.', 'key', 'required');
  }
  if (has('filters')) input.filters = await validateFilters(body['filters'], input.key, ctx);
  if (has('deleted')) input.deleted = parseBoolean(body['deleted'], 'deleted');
  if (has('active')) input.active = parseBoolean(body['active'], 'active');
  if (has('ensure_experience_continuity'))
    input.ensure_experience_continuity = parseBoolean(body['ensure_experience_continuity'], 'ensure_experience_continuity');
  if (has('rollback_conditions')) input.rollback_conditions = body['rollback_conditions'];
  if (has('performed_rollback')) input.performed_rollback = parseBoolean(body['performed_rollback'], 'performed_rollback');
  if (has('tags')) {
    input.tags = parseList(body['tags'], 'tags').map((tag, i) => parseString(tag, `tags__${i}`, { maxLength: MAX_TAG_LENGTH }));
  }
  if (has('analytics_dashboards')) {
    const ids = parseList(body['analytics_dashboards'], 'analytics_dashboards').map((id, i) =>
      parseInteger(id, `analytics_dashboards__${i}`, { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    );
    // An id outside the column's range names no dashboard: DRF's "does not exist", without a query.
    const outOfRange = ids.filter((id) => !isInt4Id(id));
    const missing = outOfRange.length > 0 ? outOfRange : await ctx.missingDashboards(ids);
    if (missing.length > 0) throw errors.validation(`Invalid pk "${missing[0]}" - object does not exist.`, 'analytics_dashboards', 'does_not_exist');
    input.analytics_dashboards = ids;
  }
  if (has('has_enriched_analytics')) input.has_enriched_analytics = parseBoolean(body['has_enriched_analytics'], 'has_enriched_analytics');
  if (has('creation_context')) input.creation_context = parseChoice(body['creation_context'], 'creation_context', CREATION_CONTEXTS);
  if (has('evaluation_runtime')) input.evaluation_runtime = parseChoice(body['evaluation_runtime'], 'evaluation_runtime', EVALUATION_RUNTIMES);
  if (has('_should_create_usage_dashboard'))
    input.create_usage_dashboard = parseBoolean(body['_should_create_usage_dashboard'], '_should_create_usage_dashboard');
  if (has('version')) input.version = parseInteger(body['version'], 'version');
  if (has('original_flag') && isJsonObject(body['original_flag'])) input.original_flag = body['original_flag'];
  return input;
}
