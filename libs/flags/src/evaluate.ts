import { isJsonObject } from '@sightline/json-input';
import { cohortIdOf, isInCohort, StoreUnavailableError } from './cohorts';
import { flagHash, holdoutHash } from './hash';
import { matchProperty } from './property-match';
import type { EvaluationContext, FlagCondition, FlagDefinition, FlagReason, FlagResult, PropertyFilter, ReasonCode } from './types';

/** Which reason is reported when no condition matched (docs/flags.md#reasons; higher wins, ties go to the later). */
const REASON_SCORE: Record<ReasonCode, number> = {
  super_condition_value: 6,
  holdout_condition_value: 5,
  condition_match: 4,
  no_group_type: 3,
  out_of_rollout_bound: 2,
  no_condition_match: 1,
  flag_disabled: 0,
  missing_dependency: -1,
  database_error: -2,
  hash_key_override_error: -2,
  evaluation_error: -2,
};

const DESCRIPTIONS: Partial<Record<ReasonCode, string>> = {
  super_condition_value: 'Super condition value',
  holdout_condition_value: 'Holdout condition value',
  no_group_type: 'No group type',
  out_of_rollout_bound: 'Out of rollout bound',
  no_condition_match: 'No matching condition set',
};

/** Reasons made so far, per code and condition index (null at 0, index i at i + 1): the same few recur on every request. */
const reasons = new Map<ReasonCode, FlagReason[]>();
/** Condition indexes past this get a reason of their own each time (a flag has a handful of conditions). */
const MOST_INTERNED_CONDITIONS = 64;

/** The reason for a code and condition index; shared and frozen, so callers may keep it (or its JSON text, per object). */
export function reasonOf(code: ReasonCode, conditionIndex: number | null): FlagReason {
  const slot = conditionIndex === null ? 0 : conditionIndex + 1;
  let byIndex = reasons.get(code);
  const known = byIndex?.[slot];
  if (known) return known;
  const description = code === 'condition_match' && conditionIndex !== null ? `Matched condition set ${conditionIndex + 1}` : DESCRIPTIONS[code];
  const reason = Object.freeze(
    description === undefined ? { code, condition_index: conditionIndex } : { code, condition_index: conditionIndex, description },
  ) as FlagReason;
  if (Number.isInteger(slot) && slot >= 0 && slot <= MOST_INTERNED_CONDITIONS) {
    if (!byIndex) reasons.set(code, (byIndex = []));
    byIndex[slot] = reason;
  }
  return reason;
}

/** Extra inputs the request path supplies when a store could not be read (partial failure). */
export interface Availability {
  /** false: personProperties holds only the request's overrides. */
  personProperties: boolean;
  groupProperties: boolean;
  hashKeyOverrides: boolean;
  staticCohorts: boolean;
}

const ALL_AVAILABLE: Availability = { personProperties: true, groupProperties: true, hashKeyOverrides: true, staticCohorts: true };

/** Resolves a flag-on-flag dependency to its result; null when missing or circular. */
export type DependencyResolver = (keyOrId: string) => FlagResult | null;

class MissingDependency extends Error {}

/** A stored definition whose shape the engine cannot read: the flag fails alone (see evaluate). */
class MalformedDefinition extends Error {}

/**
 * A list of a stored definition (conditions, property filters, variants): absent is empty;
 * anything but a list of objects is malformed. Iterating a string or an object instead would
 * answer a plausible but wrong value (a string iterates its characters) or throw mid-flag.
 */
function listOf<T>(value: readonly T[] | null | undefined, what: string): readonly T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !(value as unknown[]).every((item) => isJsonObject(item))) throw new MalformedDefinition(`${what} is not a list of objects`);
  return value;
}

const conditionOrder = new WeakMap<FlagDefinition, Array<{ condition: FlagCondition; index: number }>>();

/** Conditions carrying a variant override go first (stable), keeping their original index; computed once per definition. */
function orderedConditions(flag: FlagDefinition): Array<{ condition: FlagCondition; index: number }> {
  let ordered = conditionOrder.get(flag);
  if (!ordered) {
    ordered = listOf(flag.filters.groups, 'groups').map((condition, index) => ({ condition, index }));
    ordered.sort((a, b) => Number(!a.condition.variant) - Number(!b.condition.variant));
    conditionOrder.set(flag, ordered);
  }
  return ordered;
}

interface Target {
  identifier: string;
  properties: Record<string, unknown>;
  complete: boolean;
}

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

function variantsOf(flag: FlagDefinition) {
  const variants = listOf(flag.filters.multivariate?.variants, 'multivariate.variants');
  // The flag service cannot read such a variant either (its definition fails to deserialise).
  if (!variants.every((v) => typeof v.key === 'string' && typeof v.rollout_percentage === 'number')) {
    throw new MalformedDefinition('a variant without a string key and a numeric rollout_percentage');
  }
  return variants;
}

function matchingVariant(flag: FlagDefinition, identifier: string): string | null {
  const hash = flagHash(flag.key, identifier, 'variant');
  let cumulative = 0;
  for (const variant of variantsOf(flag)) {
    cumulative += variant.rollout_percentage / 100;
    if (hash < cumulative) return variant.key;
  }
  return null;
}

function payloadFor(flag: FlagDefinition, variant: string | null): unknown {
  const payloads = flag.filters.payloads;
  if (!payloads) return null;
  const payload = payloads[variant ?? 'true'];
  return payload === undefined ? null : payload;
}

function inRollout(flag: FlagDefinition, identifier: string, rollout: number | null | undefined): boolean {
  const pct = rollout ?? 100;
  return pct === 100 || flagHash(flag.key, identifier, '') <= pct / 100;
}

function dependencyMatches(filter: PropertyFilter, resolve: DependencyResolver): boolean {
  if (filter.operator !== 'flag_evaluates_to' || filter.key === undefined || filter.key === '') return false;
  const dependency = resolve(String(filter.key));
  if (!dependency) throw new MissingDependency(String(filter.key));
  const expected = filter.value;
  if (expected === true) return dependency.enabled;
  if (expected === false) return !dependency.enabled;
  if (typeof expected === 'string') return dependency.enabled && dependency.variant === expected;
  return false;
}

export class FlagEvaluator {
  constructor(
    private readonly ctx: EvaluationContext,
    private readonly availability: Availability = ALL_AVAILABLE,
  ) {}

  private groupTarget(groupTypeIndex: number): Target | null {
    const name = this.ctx.groupTypeNames.get(groupTypeIndex);
    const key = name === undefined ? undefined : this.ctx.groups[name];
    if (typeof key !== 'string') return null;
    return { identifier: key, properties: this.ctx.groupProperties[name!] ?? {}, complete: this.availability.groupProperties };
  }

  private personTarget(flag: FlagDefinition): Target {
    let identifier = this.ctx.distinctId;
    if (flag.bucketing_identifier === 'device_id') identifier = this.ctx.deviceId || this.ctx.distinctId;
    else if (flag.ensure_experience_continuity) {
      if (!this.availability.hashKeyOverrides) throw new StoreUnavailableError('hash key overrides');
      identifier = this.ctx.hashKeyOverrides[flag.key] ?? identifier;
    }
    return { identifier, properties: this.ctx.personProperties, complete: this.availability.personProperties };
  }

  /** Properties first (non-cohort, then cohorts), all ANDed; then the rollout. */
  private conditionState(flag: FlagDefinition, condition: FlagCondition, target: Target, resolve: DependencyResolver): 'match' | 'no_match' | 'out_of_rollout' {
    const filters = listOf(condition.properties, 'properties');
    const cohortFilters: PropertyFilter[] = [];
    for (const filter of filters) {
      if (filter.type === 'cohort') {
        cohortFilters.push(filter);
        continue;
      }
      if (filter.type === 'flag') {
        if (!dependencyMatches(filter, resolve)) return 'no_match';
        continue;
      }
      if (!target.complete && !hasOwn(target.properties, filter.key)) throw new StoreUnavailableError('stored properties');
      if (!matchProperty(filter, target.properties, this.ctx.now, this.ctx.dateMargin)) return 'no_match';
    }
    for (const filter of cohortFilters) {
      if (!target.complete || !this.availability.staticCohorts) throw new StoreUnavailableError('cohort membership');
      const id = cohortIdOf(filter);
      let member =
        id !== null &&
        isInCohort(id, target.properties, {
          cohorts: this.ctx.cohorts,
          staticCohortIds: this.ctx.staticCohortIds,
          now: this.ctx.now,
          dateMargin: this.ctx.dateMargin,
        });
      if (filter.operator === 'not_in') member = !member;
      if (filter.negation) member = !member;
      if (!member) return 'no_match';
    }
    return inRollout(flag, target.identifier, condition.rollout_percentage) ? 'match' : 'out_of_rollout';
  }

  private result(flag: FlagDefinition, enabled: boolean, variant: string | null, reason: FlagReason, payload: unknown = null): FlagResult {
    return {
      key: flag.key,
      enabled,
      variant,
      reason,
      payload: enabled ? payload : null,
      id: flag.id,
      version: flag.version ?? 0,
      description: flag.name === '' ? null : (flag.name ?? null),
    };
  }

  /** One flag (docs/flags.md#evaluation-order); `resolve` gives the results of the flags it depends on. */
  evaluate(flag: FlagDefinition, resolve: DependencyResolver): FlagResult {
    if (!flag.active) return this.result(flag, false, null, reasonOf('flag_disabled', null));
    try {
      return this.evaluateActive(flag, resolve);
    } catch (error) {
      if (error instanceof MissingDependency) return this.result(flag, false, null, reasonOf('missing_dependency', null));
      if (error instanceof StoreUnavailableError) {
        const code: ReasonCode = error.message.startsWith('hash key') ? 'hash_key_override_error' : 'database_error';
        return { ...this.result(flag, false, null, reasonOf(code, null)), failed: true };
      }
      // A definition the engine cannot read (stored before validation refused its shape, or
      // written by hand) fails alone: the other flags of the request are still answered, and
      // the answer says errorsWhileComputingFlags, as PostHog's flag service does.
      return { ...this.result(flag, false, null, reasonOf('evaluation_error', null)), failed: true };
    }
  }

  private evaluateActive(flag: FlagDefinition, resolve: DependencyResolver): FlagResult {
    const filters = flag.filters ?? {};
    const flagGroupIndex = filters.aggregation_group_type_index ?? null;
    let target: Target;
    if (flagGroupIndex !== null) {
      const group = this.groupTarget(flagGroupIndex);
      if (!group) return this.result(flag, false, null, reasonOf('no_group_type', null));
      target = group;
    } else target = this.personTarget(flag);

    // Early access: the super condition decides alone once the person has any of its keys.
    const superCondition = listOf(filters.super_groups, 'super_groups')[0];
    if (superCondition) {
      const person = this.personTarget(flag);
      const relevant = listOf(superCondition.properties, 'properties').some((p) => hasOwn(person.properties, p.key));
      if (relevant) {
        const matched = this.conditionState(flag, superCondition, person, resolve) === 'match';
        return this.result(flag, matched, null, reasonOf('super_condition_value', 0), payloadFor(flag, null));
      }
    }

    // Holdouts bucket by the group key or the person's own id: never by a continuity hash key.
    const holdoutIdentifier =
      flagGroupIndex !== null ? target.identifier : flag.bucketing_identifier === 'device_id' ? this.ctx.deviceId || this.ctx.distinctId : this.ctx.distinctId;
    // Experiment holdouts, current shape {id, exclusion_percentage}: the variant is "holdout-<id>".
    const experimentHoldout = filters.holdout;
    if (experimentHoldout && experimentHoldout.id !== null && experimentHoldout.id !== undefined && experimentHoldout.exclusion_percentage !== null) {
      const pct = Math.min(Math.max(Number(experimentHoldout.exclusion_percentage), 0), 100);
      if (Number.isFinite(pct) && (pct === 100 || holdoutHash(holdoutIdentifier) <= pct / 100)) {
        const variant = `holdout-${experimentHoldout.id}`;
        return this.result(flag, true, variant, reasonOf('holdout_condition_value', null), payloadFor(flag, variant));
      }
    }
    // Legacy shape: holdout_groups[0] with a rollout percentage and an optional variant.
    const holdout = listOf(filters.holdout_groups, 'holdout_groups')[0];
    if (holdout && listOf(holdout.properties, 'properties').length === 0) {
      const pct = holdout.rollout_percentage;
      const inHoldout = pct === null || pct === undefined || holdoutHash(holdoutIdentifier) <= pct / 100;
      if (inHoldout) {
        const variant = holdout.variant ?? matchingVariant(flag, target.identifier) ?? 'holdout';
        return this.result(flag, true, variant, reasonOf('holdout_condition_value', null), payloadFor(flag, variant));
      }
    }

    let bestCode: ReasonCode = 'no_condition_match';
    let bestIndex: number | null = null;
    for (const { condition, index } of orderedConditions(flag)) {
      let conditionTarget = target;
      const conditionGroupIndex = condition.aggregation_group_type_index;
      if (conditionGroupIndex !== undefined && conditionGroupIndex !== null && conditionGroupIndex !== flagGroupIndex) {
        const group = this.groupTarget(conditionGroupIndex);
        if (!group) continue; // mixed targeting: this condition's group is not in the request
        conditionTarget = group;
      }
      const state = this.conditionState(flag, condition, conditionTarget, resolve);
      const code: ReasonCode = state === 'match' ? 'condition_match' : state === 'out_of_rollout' ? 'out_of_rollout_bound' : 'no_condition_match';
      if (REASON_SCORE[bestCode] <= REASON_SCORE[code]) {
        bestCode = code;
        bestIndex = index;
      }
      if (state === 'match') {
        const override = condition.variant;
        const variant = override && variantsOf(flag).some((v) => v.key === override) ? override : matchingVariant(flag, conditionTarget.identifier);
        return this.result(flag, true, variant, reasonOf(bestCode, bestIndex), payloadFor(flag, variant));
      }
      if (state === 'out_of_rollout' && filters.early_exit) break;
    }
    return this.result(flag, false, null, reasonOf(bestCode, bestIndex));
  }
}

/**
 * Evaluates the requested flags (all when `onlyKeys` is absent) and, through flag-on-flag
 * dependencies, whatever they depend on. A dependency that is missing or circular makes the
 * dependent flag false with `missing_dependency`.
 */
export function evaluateFlags(
  flags: readonly FlagDefinition[],
  ctx: EvaluationContext,
  options: { onlyKeys?: readonly string[] | null; availability?: Availability } = {},
): Map<string, FlagResult> {
  const evaluator = new FlagEvaluator(ctx, options.availability);
  const byKey = new Map<string, FlagDefinition>();
  const byId = new Map<string, FlagDefinition>();
  for (const flag of flags) {
    byKey.set(flag.key, flag);
    byId.set(String(flag.id), flag);
  }
  const done = new Map<string, FlagResult>();
  const inProgress = new Set<string>();
  const inCycle = new Set<string>();
  const run = (flag: FlagDefinition): FlagResult | null => {
    const known = done.get(flag.key);
    if (known) return known;
    if (inProgress.has(flag.key)) {
      inCycle.add(flag.key); // the flag that closes the cycle also ends up missing_dependency
      return null;
    }
    inProgress.add(flag.key);
    let result = evaluator.evaluate(flag, (ref) => {
      const dependency = byId.get(ref) ?? byKey.get(ref);
      return dependency ? run(dependency) : null;
    });
    inProgress.delete(flag.key);
    if (inCycle.has(flag.key)) result = { ...result, enabled: false, variant: null, payload: null, reason: reasonOf('missing_dependency', null) };
    done.set(flag.key, result);
    return result;
  };
  const wanted = options.onlyKeys ? options.onlyKeys.map((k) => byKey.get(k)).filter((f): f is FlagDefinition => f !== undefined) : flags;
  const results = new Map<string, FlagResult>();
  for (const flag of wanted) results.set(flag.key, run(flag)!);
  return results;
}
