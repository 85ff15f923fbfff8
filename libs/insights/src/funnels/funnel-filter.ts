import { isJsonObject } from '@sightline/json-input';
import { filtersOf, parsePropertyFilters, PropertyFilterError, type PropertyGroup } from '@sightline/properties';
import { INTERVALS } from '../common/date-range';
import { optionalInteger } from '../common/filter-fields';
import { parseQueryFilterBase, type QueryFilterBase } from '../common/query-filter-base';
import { QueryFilterError } from '../common/query-filter-error';
import { MATHS, type SeriesInput } from '../common/series';

export const FUNNEL_ORDER_TYPES = ['ordered', 'strict', 'unordered'] as const;
export const FUNNEL_VIZ_TYPES = ['steps', 'time_to_convert', 'trends'] as const;
export const FUNNEL_WINDOW_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month'] as const;
/** PostHog's BreakdownAttributionType: which of an actor's events give its breakdown value. */
export const BREAKDOWN_ATTRIBUTION_TYPES = ['first_touch', 'last_touch', 'all_events', 'step'] as const;
export type BreakdownAttributionType = (typeof BREAKDOWN_ATTRIBUTION_TYPES)[number];
/**
 * Breakdown types whose value PostHog's funnels answer as a list even for one property
 * (FunnelQueryContext.breakdown boxes them); a group breakdown stays a text unless asked as a list.
 */
const LIST_VALUED_BREAKDOWN_TYPES = new Set(['event', 'person', 'event_metadata', 'hogql']);
const UNIT_SECONDS: Record<(typeof FUNNEL_WINDOW_UNITS)[number], number> = {
  second: 1,
  minute: 60,
  hour: 3_600,
  day: 86_400,
  week: 7 * 86_400,
  month: 30 * 86_400,
};
/** The longest conversion window read: 100 years (ClickHouse's DateTime64 ends in 2299). */
const MAX_WINDOW_SECONDS = 100 * 365.25 * 86_400;
/**
 * The maths of PostHog's FunnelMathType that change which events a step counts: only a person's
 * first-ever event of the step (first_time_for_user), or their first-ever event that matches the
 * step's filters too (first_time_for_user_with_filters). Other maths are accepted and ignored.
 */
export const FIRST_TIME_STEP_MATHS: ReadonlySet<string> = new Set(['first_time_for_user', 'first_time_for_user_with_filters']);
const FUNNEL_STEP_MATHS: ReadonlySet<string> = new Set([...MATHS, ...FIRST_TIME_STEP_MATHS]);
/** PostHog clamps a custom bin_count into 1..90 (funnel_time_to_convert.py). */
const MAX_BIN_COUNT = 90;
/** A funnel has at most this many steps (PostHog's editor allows 20). */
export const MAX_FUNNEL_STEPS = 20;
export const MAX_EXCLUSIONS = 10;

export interface FunnelExclusion {
  event: string | null;
  actionId: number | null;
  fromStep: number;
  toStep: number;
  /** The exclusion event's own filters (a FunnelExclusionEventsNode's `properties`). */
  properties: PropertyGroup;
}

/** The filter types an exclusion's properties may use: those compiled over the event row alone. */
const EXCLUSION_FILTER_TYPES: ReadonlySet<string> = new Set(['event', 'person', 'element', 'group', 'session']);

function exclusionProperties(value: unknown, attr: string): PropertyGroup {
  try {
    return parsePropertyFilters(value, attr, { types: EXCLUSION_FILTER_TYPES });
  } catch (error) {
    if (error instanceof PropertyFilterError) throw new QueryFilterError(error.attr, error.message, error.code);
    throw error;
  }
}

/** A funnel's filter: the fields every insight shares, its series as steps, and the funnel's own. */
export interface ParsedFunnelFilter extends Pick<
  QueryFilterBase,
  | 'properties'
  | 'filter_test_accounts'
  | 'date_from'
  | 'date_to'
  | 'explicit_date'
  | 'interval'
  | 'breakdowns'
  | 'breakdown_limit'
  | 'aggregation_group_type_index'
  | 'request'
> {
  steps: SeriesInput[];
  orderType: (typeof FUNNEL_ORDER_TYPES)[number];
  vizType: (typeof FUNNEL_VIZ_TYPES)[number];
  windowSeconds: number;
  exclusions: FunnelExclusion[];
  /** Each breakdown value is a list (one entry per breakdown), as PostHog's funnels answer it. */
  breakdownValueIsList: boolean;
  breakdownAttribution: { type: BreakdownAttributionType; step: number };
  /**
   * `funnel_aggregate_by_hogql`: what a funnel counts instead of persons, a HogQL expression per
   * event (`properties.$session_id` counts sessions); null counts persons (absent, or "person_id").
   */
  aggregateByHogQL: string | null;
  fromStep: number;
  toStep: number;
  binCount: number | null;
}

function choice<T extends string>(body: Record<string, unknown>, key: string, choices: readonly T[], fallback: T): T {
  const value = body[key];
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw new QueryFilterError(key, `"${String(value).slice(0, 40)}" is not a valid choice (one of: ${choices.join(', ')}).`, 'invalid_choice');
  }
  return value as T;
}

/**
 * PostHog's legacy funnel filter: the steps are the base filter's series (events and actions
 * in `order`), plus `funnel_order_type`, the conversion window, `exclusions`, the viz type and
 * its step range. The shared fields (dates, properties, breakdowns) are read by parseQueryFilterBase.
 */
export function parseFunnelFilter(input: unknown): ParsedFunnelFilter {
  if (!isJsonObject(input)) throw new QueryFilterError(null, 'The funnel query must be a JSON object.', 'parse_error');
  const body = input;
  const { funnel_viz_type: _viz, exclusions: _exclusions, breakdown_attribution_type: _type, breakdown_attribution_value: _value, ...shared } = body;
  const base = parseQueryFilterBase({ ...shared, ...propertyListBreakdowns(body) }, { seriesMaths: FUNNEL_STEP_MATHS });
  if (base.series.length > MAX_FUNNEL_STEPS) throw new QueryFilterError('events', `A funnel may have at most ${MAX_FUNNEL_STEPS} steps.`, 'max_length');
  const orderType = choice(body, 'funnel_order_type', FUNNEL_ORDER_TYPES, 'ordered');
  const vizType = choice(body, 'funnel_viz_type', FUNNEL_VIZ_TYPES, 'steps');
  const unit = choice(body, 'funnel_window_interval_unit', FUNNEL_WINDOW_UNITS, 'day');
  // PostHog takes any positive window (test_funnel_with_long_interval_no_first_step asks for
  // 3,122,064,000 seconds); past MAX_WINDOW_SECONDS a longer one changes nothing but the span read.
  const windowInterval = optionalInteger(body, 'funnel_window_interval', 1, 1e12) ?? (body['funnel_window_days'] !== undefined ? null : 14);
  const windowDays = optionalInteger(body, 'funnel_window_days', 1, 1e9);
  const windowSeconds = Math.min(MAX_WINDOW_SECONDS, windowInterval !== null ? windowInterval * UNIT_SECONDS[unit] : windowDays! * 86_400);
  const stepCount = base.series.length;
  const exclusions: FunnelExclusion[] = [];
  const rawExclusions = body['exclusions'];
  if (rawExclusions !== undefined && rawExclusions !== null) {
    if (!Array.isArray(rawExclusions)) throw new QueryFilterError('exclusions', 'exclusions must be a list.', 'not_a_list');
    if (rawExclusions.length > MAX_EXCLUSIONS) throw new QueryFilterError('exclusions', `At most ${MAX_EXCLUSIONS} exclusions are allowed.`, 'max_length');
    rawExclusions.forEach((raw, i) => {
      const attr = `exclusions__${i}`;
      if (!isJsonObject(raw)) throw new QueryFilterError(attr, 'Each exclusion must be an object.', 'invalid');
      const isAction = raw['type'] === 'actions';
      const id = raw['id'];
      if (isAction ? !(Number.isInteger(Number(id)) && Number(id) > 0) : !(typeof id === 'string' || id === null)) {
        throw new QueryFilterError(
          `${attr}__id`,
          isAction ? 'An action exclusion needs the action id.' : 'An event exclusion needs the event name.',
          'invalid',
        );
      }
      const fromStep = optionalInteger(raw, 'funnel_from_step', 0, stepCount - 1) ?? 0;
      const toStep = optionalInteger(raw, 'funnel_to_step', 0, stepCount - 1) ?? stepCount - 1;
      if (toStep <= fromStep) throw new QueryFilterError(`${attr}__funnel_to_step`, 'funnel_to_step must come after funnel_from_step.', 'invalid');
      const exclusion: FunnelExclusion = {
        event: isAction ? null : (id as string | null),
        actionId: isAction ? Number(id) : null,
        fromStep,
        toStep,
        properties: exclusionProperties(raw['properties'], `${attr}__properties`),
      };
      if (base.series.slice(fromStep, toStep + 1).some((step) => stepCoversExclusion(step, exclusion))) {
        throw new QueryFilterError(attr, "Exclusion steps cannot contain an event that's part of funnel steps.", 'invalid');
      }
      if (orderType === 'unordered' && (fromStep !== 0 || toStep !== stepCount - 1)) {
        throw new QueryFilterError(attr, 'Partial Exclusions not allowed in unordered funnels', 'invalid');
      }
      exclusions.push(exclusion);
    });
  }
  checkOptionalSteps(base.series, orderType, vizType);
  const fromStep = optionalInteger(body, 'funnel_from_step', 0, Math.max(0, stepCount - 1)) ?? 0;
  const askedToStep = optionalInteger(body, 'funnel_to_step', 0, Math.max(0, stepCount - 1));
  // Time to convert reads a to-step of 0 as none given, so up to the last step (PostHog's
  // `funnelToStep or len(series) - 1`, funnel_time_to_convert_udf.py).
  const toStep = askedToStep === null || (vizType === 'time_to_convert' && askedToStep === 0) ? Math.max(0, stepCount - 1) : askedToStep;
  if (stepCount > 0 && vizType === 'time_to_convert' && toStep <= fromStep) {
    throw new QueryFilterError('funnel_to_step', 'funnel_to_step must come after funnel_from_step.', 'invalid');
  }
  const interval = base.interval;
  if (!(INTERVALS as readonly string[]).includes(interval)) throw new QueryFilterError('interval', 'Unknown interval.', 'invalid_choice');
  const breakdownAttribution = {
    type: choice(body, 'breakdown_attribution_type', BREAKDOWN_ATTRIBUTION_TYPES, 'first_touch'),
    step: optionalInteger(body, 'breakdown_attribution_value', 0, Math.max(0, stepCount - 1)) ?? 0,
  };
  // posthog/hogql_queries/insights/funnels/funnel_udf.py refuses this too.
  if (orderType === 'unordered' && breakdownAttribution.type === 'step' && breakdownAttribution.step !== 0) {
    throw new QueryFilterError('breakdown_attribution_value', 'Only the first step can be used for breakdown attribution in unordered funnels.', 'invalid');
  }
  const rawBreakdown = body['breakdown'];
  const breakdownValueIsList =
    base.breakdowns.length > 0 &&
    base.breakdowns[0]!.type !== 'cohort' &&
    (base.breakdowns.length > 1 || Array.isArray(rawBreakdown) || base.breakdown_is_list || LIST_VALUED_BREAKDOWN_TYPES.has(base.breakdowns[0]!.type));
  return {
    steps: base.series,
    properties: base.properties,
    filter_test_accounts: base.filter_test_accounts,
    date_from: base.date_from,
    date_to: base.date_to,
    explicit_date: base.explicit_date,
    interval,
    orderType,
    vizType,
    windowSeconds,
    exclusions,
    breakdowns: base.breakdowns,
    breakdownValueIsList,
    breakdownAttribution,
    breakdown_limit: base.breakdown_limit,
    aggregation_group_type_index: base.aggregation_group_type_index,
    aggregateByHogQL: aggregateByHogQL(body),
    fromStep,
    toStep,
    binCount: binCount(body),
    request: body,
  };
}

/**
 * The HogQL a funnel aggregates by. PostHog counts persons when it is absent or "person_id"
 * (funnel_event_query.py, `_aggregation_target_expr`); a group aggregation takes precedence there.
 */
function aggregateByHogQL(body: Record<string, unknown>): string | null {
  const value = body['funnel_aggregate_by_hogql'];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string')
    throw new QueryFilterError('funnel_aggregate_by_hogql', 'funnel_aggregate_by_hogql must be a HogQL expression (text).', 'invalid');
  // Its length and nesting are bounded where every HogQL expression is, in the compiler.
  const text = value.trim();
  return text === '' || text === 'person_id' ? null : text;
}

/** A custom bin count, lowered or raised into 1..90 as PostHog does rather than refused. */
function binCount(body: Record<string, unknown>): number | null {
  const asked = optionalInteger(body, 'bin_count', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  return asked === null ? null : Math.min(MAX_BIN_COUNT, Math.max(1, asked));
}

/**
 * A funnel may break down by several properties of one type given as a list
 * (`"breakdown": ["$browser", "$browser_version"]`, PostHog's multi-property funnel breakdown):
 * they are read as the base filter's `breakdowns`. A list of one, or of cohorts, is left as is.
 */
function propertyListBreakdowns(body: Record<string, unknown>): Record<string, unknown> {
  const breakdown = body['breakdown'];
  const type = body['breakdown_type'] ?? 'event';
  if (!Array.isArray(breakdown) || breakdown.length < 2 || type === 'cohort') return {};
  return {
    breakdown: undefined,
    breakdowns: breakdown.map((property) => ({
      type,
      property: typeof property === 'number' ? String(property) : property,
      group_type_index: body['breakdown_group_type_index'],
      normalize_url: body['breakdown_normalize_url'] === true,
    })),
  };
}

/**
 * Whether a step matches every event the exclusion matches (PostHog's is_equal / is_superset in
 * FunnelBase's exclusion check): the same event or action, and the step's property filters all
 * among the exclusion's.
 */
function stepCoversExclusion(step: SeriesInput, exclusion: FunnelExclusion): boolean {
  return stepCovers(step, {
    kind: exclusion.actionId !== null ? 'actions' : 'events',
    id: exclusion.actionId ?? exclusion.event,
    properties: exclusion.properties,
  });
}

/** Whether `step` matches every event `other` matches: the same event or action, with its filters all among `other`'s. */
function stepCovers(step: SeriesInput, other: Pick<SeriesInput, 'kind' | 'id' | 'properties'>): boolean {
  const sameEntity =
    other.kind === 'actions' ? step.kind === 'actions' && Number(step.id) === Number(other.id) : step.kind === 'events' && step.id === other.id;
  if (!sameEntity) return false;
  const otherFilters = new Set(filtersOf(other.properties).map((f) => JSON.stringify(f)));
  return filtersOf(step.properties).every((f) => otherFilters.has(JSON.stringify(f)));
}

/**
 * Optional steps (`optionalInFunnel`) as PostHog's ValidateOptionalFunnelSteps
 * (funnels/funnel_validation_rules.py) allows them: only in ordered or strict funnels drawn as
 * steps, never the first step, and never right before a required step that matches the same
 * events (that step would take the shared event and the optional one could never convert).
 */
function checkOptionalSteps(steps: SeriesInput[], orderType: ParsedFunnelFilter['orderType'], vizType: ParsedFunnelFilter['vizType']): void {
  if (!steps.some((s) => s.optionalInFunnel)) return;
  const code = 'funnel_optional_steps_invalid';
  if (vizType !== 'steps' || orderType === 'unordered') {
    throw new QueryFilterError(
      'events',
      'Optional funnel steps are only supported in funnels with step order Sequential or Strict and the graph type "Conversion Steps".',
      code,
    );
  }
  if (steps[0]!.optionalInFunnel) throw new QueryFilterError('events', 'The first step of a funnel cannot be optional.', code);
  steps.forEach((current, i) => {
    const previous = steps[i - 1];
    if (previous?.optionalInFunnel && !current.optionalInFunnel && stepCovers(current, previous)) {
      throw new QueryFilterError('events', 'An optional step cannot be the same as the following required step.', code);
    }
  });
}
