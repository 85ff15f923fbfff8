import type { DateMargin } from './dates';
/** Flag definitions as PostHog stores and serves them (docs/flags.md#definitions); JSON-shaped. */

import { PROPERTY_OPERATORS, type PropertyFilter, type PropertyGroup } from '@sightline/properties';

export type { PropertyFilter, PropertyFilterType, PropertyGroup } from '@sightline/properties';

/** Operators only queries apply (PostHog's flag service has none of them). */
const QUERY_ONLY_OPERATORS = new Set(['min', 'max', 'is_cleaned_path_exact']);

/** Every operator a flag condition may use: the engine's (see property-match.ts), `in` / `not_in`, `flag_evaluates_to`. */
export const FLAG_PROPERTY_OPERATORS: ReadonlySet<string> = new Set([...PROPERTY_OPERATORS].filter((operator) => !QUERY_ONLY_OPERATORS.has(operator)));

export interface FlagCondition {
  properties?: PropertyFilter[] | null;
  rollout_percentage?: number | null;
  variant?: string | null;
  /** Mixed targeting: a condition bucketed by another group type than the flag's. */
  aggregation_group_type_index?: number | null;
  description?: string | null;
}

export interface FlagVariant {
  key: string;
  name?: string | null;
  rollout_percentage: number;
}

export interface FlagFilters {
  groups?: FlagCondition[] | null;
  multivariate?: { variants: FlagVariant[] } | null;
  aggregation_group_type_index?: number | null;
  payloads?: Record<string, unknown> | null;
  super_groups?: FlagCondition[] | null;
  holdout_groups?: FlagCondition[] | null;
  holdout?: { id: number | string | null; exclusion_percentage: number | null } | null;
  early_exit?: boolean | null;
}

export interface FlagDefinition {
  id: number;
  team_id: number;
  key: string;
  name: string;
  filters: FlagFilters;
  active: boolean;
  deleted?: boolean;
  ensure_experience_continuity: boolean;
  version: number;
  evaluation_runtime?: string | null;
  bucketing_identifier?: 'distinct_id' | 'device_id' | string | null;
}

export interface CohortDefinition {
  id: number;
  is_static: boolean;
  /** Dynamic cohorts: the property group persons must match; null for static ones. */
  properties: PropertyGroup | null;
}

export type ReasonCode =
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'condition_match'
  | 'no_group_type'
  | 'out_of_rollout_bound'
  | 'no_condition_match'
  | 'flag_disabled'
  | 'missing_dependency'
  | 'database_error'
  | 'hash_key_override_error'
  | 'evaluation_error';

export interface FlagReason {
  code: ReasonCode;
  condition_index: number | null;
  description?: string;
}

export interface FlagResult {
  key: string;
  enabled: boolean;
  variant: string | null;
  reason: FlagReason;
  /** As stored (usually a JSON string); null when the flag is off or has none. */
  payload: unknown;
  id: number;
  version: number;
  description: string | null;
  /** Evaluation could not be completed (e.g. the person store was unreachable). */
  failed?: true;
}

/** Everything one evaluation request needs; built by the caller from the request and the stores. */
export interface EvaluationContext {
  distinctId: string;
  deviceId?: string | null;
  /** Stored person properties with the request's `person_properties` merged over them. */
  personProperties: Record<string, unknown>;
  /** Group type name → group key, from the request. */
  groups: Record<string, unknown>;
  /** Group type name → properties (stored, with the request's overrides merged over them). */
  groupProperties: Record<string, Record<string, unknown>>;
  /** Group type index → name. */
  groupTypeNames: ReadonlyMap<number, string>;
  cohorts: ReadonlyMap<number, CohortDefinition>;
  /** Static cohorts the person belongs to. */
  staticCohortIds: ReadonlySet<number>;
  /** Experience continuity: flag key → hash key (the person's first anonymous id). */
  hashKeyOverrides: Readonly<Record<string, string>>;
  now: Date;
  /** Narrowed by every date comparison: how long the results hold as the clock advances (dates.ts). */
  dateMargin?: DateMargin;
}
