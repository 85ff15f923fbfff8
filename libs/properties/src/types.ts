/**
 * Property filters as PostHog stores and sends them: in flag conditions, insight filters,
 * cohorts and actions. JSON-shaped; the flag engine matches them in memory, the query compiler
 * turns them into SQL.
 */

export type PropertyFilterType = 'event' | 'person' | 'group' | 'cohort' | 'flag' | 'element' | 'session' | 'hogql' | string;

export interface PropertyFilter {
  key: string;
  value?: unknown;
  operator?: string | null;
  type?: PropertyFilterType;
  negation?: boolean | null;
  group_type_index?: number | null;
  /** Flag-on-flag filters: the keys (or ids) the SDKs evaluate first. */
  dependency_chain?: unknown[];
}

export interface PropertyGroup {
  type: 'AND' | 'OR';
  values: Array<PropertyGroup | PropertyFilter>;
}

export const isPropertyGroup = (value: PropertyGroup | PropertyFilter): value is PropertyGroup =>
  (value as PropertyGroup).type === 'AND' || (value as PropertyGroup).type === 'OR' ? Array.isArray((value as PropertyGroup).values) : false;

/**
 * Every property operator: the flag engine's, the query side's (`min`, `max`,
 * `is_cleaned_path_exact`), `in` / `not_in` for cohorts and `flag_evaluates_to` for flag
 * dependencies (PostHog: posthog/schema.py PropertyOperator; rust/feature-flags OperatorType).
 */
export const PROPERTY_OPERATORS: ReadonlySet<string> = new Set([
  'exact',
  'is_not',
  'is_set',
  'is_not_set',
  'icontains',
  'not_icontains',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'icontains_multi',
  'not_icontains_multi',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'not_between',
  'min',
  'max',
  'semver_gt',
  'semver_gte',
  'semver_lt',
  'semver_lte',
  'semver_eq',
  'semver_neq',
  'semver_tilde',
  'semver_caret',
  'semver_wildcard',
  'is_date_before',
  'is_date_after',
  'is_date_exact',
  'is_cleaned_path_exact',
  'in',
  'not_in',
  'flag_evaluates_to',
]);
