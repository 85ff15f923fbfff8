import type { QueryParams } from '@sightline/properties';
import type { ParsedFunnelFilter } from './funnel-filter';

/**
 * How PostHog's funnels spell the rest-of-values group ("Other", `['Other']` for a list value)
 * and a missing value (""): funnel_udf.py `other_aggregation` and `ifNull(prop, '')`. Trends
 * keep their own markers (BREAKDOWN_OTHER / BREAKDOWN_NULL in common/events-sql.ts).
 */
export const FUNNEL_BREAKDOWN_OTHER = 'Other';
/** PostHog's ALL_USERS_COHORT_ID: the breakdown_value of a cohort breakdown's "all" entry. */
export const ALL_USERS_COHORT_ID = 0;
/** PostHog's DEFAULT_RETURNED_ROWS: the most values a breakdown without an "Other" group answers. */
export const MAX_UNLIMITED_BREAKDOWN_VALUES = 100;
/** Breakdown types whose rarer values are merged into "Other" (funnel_udf.py `use_breakdown_limit`). */
const LIMITED_BREAKDOWN_TYPES = new Set(['person', 'event', 'group']);

/**
 * The breakdown parts of a funnel's SQL. Event rows carry `bv`, their own breakdown value (''
 * when missing, a list of values when the filter asks for lists); each actor's value then
 * follows `breakdown_attribution_type` as PostHog's funnel UDF reads it (funnel_udf.py
 * `_prop_vals`, funnel-udf/src/steps.rs):
 * - first_touch / last_touch: the value of the actor's first / last event read that has one;
 * - all_events: the actor counts under each value its events have, with only those events;
 * - step: under each value its events of step `breakdown_attribution_value` have, where that
 *   step is reached only through an event with the value (an actor who never does it is left out).
 */
export class FunnelBreakdownSql {
  constructor(
    private readonly filter: ParsedFunnelFilter,
    private readonly params: QueryParams,
    /** The breakdowns this query reads (none for a cohort breakdown, which runs one query per cohort). */
    private readonly breakdowns: ParsedFunnelFilter['breakdowns'],
  ) {}

  get active(): boolean {
    return this.breakdowns.length > 0;
  }

  /** An event row's breakdown value from each breakdown's text ('' when missing). */
  rowValueSql(values: string[]): string {
    if (values.length === 0) return "''";
    return this.filter.breakdownValueIsList ? `[${values.join(', ')}]` : values[0]!;
  }

  private hasValue(bv: string): string {
    return this.filter.breakdownValueIsList ? `arrayExists(x -> x != '', ${bv})` : `${bv} != ''`;
  }

  /** Whether an actor counts once per breakdown value (the per-actor query groups by `bv` too). */
  get perValue(): boolean {
    return this.active && (this.filter.breakdownAttribution.type === 'all_events' || this.filter.breakdownAttribution.type === 'step');
  }

  /** The per-actor query's GROUP BY. */
  groupBySql(): string {
    return this.perValue ? 'actor, bv' : 'actor';
  }

  /** The per-actor value over the actor's rows (`t`: the time of each row). */
  actorValueSql(): string {
    if (this.perValue) return 'bv';
    if (!this.active) return "''";
    const pick = this.filter.breakdownAttribution.type === 'last_touch' ? 'argMaxIf' : 'argMinIf';
    const value = `${pick}(bv, t, ${this.hasValue('bv')})`;
    // No event with a value: '' for each breakdown.
    return this.filter.breakdownValueIsList ? `arrayResize(${value}, ${this.breakdowns.length}, '')` : value;
  }

  /**
   * Step attribution: each row once per value the actor's events of that step have, as `bv`; a
   * row of that step with another value no longer counts as the step (its bit, and the sort
   * key's copy of it, cleared). Other attributions read the rows as they are.
   */
  attributedRowsSql(rows: string, withKey: boolean): string {
    if (!this.active || this.filter.breakdownAttribution.type !== 'step') return rows;
    // Unordered, any step may come first: the actor counts under every value its events have,
    // each time with all its events (funnel-udf/src/unordered_steps.rs keeps no attribution step).
    if (this.filter.orderType === 'unordered') {
      return `SELECT actor, t, mask, xmask, v AS bv${withKey ? ', k' : ''}
      FROM (SELECT actor, t, mask, xmask${withKey ? ', k' : ''}, groupUniqArray(bv) OVER (PARTITION BY actor) AS actor_values FROM (${rows}))
      ARRAY JOIN actor_values AS v`;
    }
    const step = this.filter.breakdownAttribution.step;
    const bit = 2 ** step;
    const keeps = `(row_bv = v OR NOT bitTest(row_mask, ${step}))`;
    // The bit is set wherever it is cleared: XOR clears it and keeps the column's type.
    return `SELECT actor, t, if(${keeps}, row_mask, bitXor(row_mask, ${bit})) AS mask, xmask, v AS bv${withKey ? `, if(${keeps}, row_k, bitXor(row_k, ${bit})) AS k` : ''}
      FROM (SELECT actor, t, mask AS row_mask, xmask, bv AS row_bv${withKey ? ', k AS row_k' : ''},
              groupUniqArrayIf(bv, bitTest(mask, ${step})) OVER (PARTITION BY actor) AS step_values
            FROM (${rows}))
      ARRAY JOIN step_values AS v`;
  }

  /**
   * Step counts and conversion times per value from the actors' rows (`bv`, `level`, `times`).
   * For person, event and group breakdowns the `breakdown_limit` values ranked first keep
   * theirs and the rest become "Other"; the rank, as PostHog's funnel orders its answer, is by
   * the count at the last step, then at each earlier step, all descending (ties by value).
   */
  stepsByValueSql(
    actors: string,
    counts: string,
    averages: string,
    medians: string,
    /** Whether an actor's row counts at step i. */
    reached: (i: number) => string,
    /** The actors' columns the measures read besides `bv`. */
    columns: string[],
  ): string {
    const n = this.filter.steps.length;
    const orderBy = (value: string) => [...Array.from({ length: n }, (_, i) => `counts[${n - i}] DESC`), `${value} ASC`].join(', ');
    const order = orderBy('bv');
    const measures = `[${counts}] AS counts, [${averages}] AS averages, [${medians}] AS medians`;
    if (!LIMITED_BREAKDOWN_TYPES.has(this.breakdowns[0]!.type)) {
      return `SELECT bv, ${measures} FROM (${actors}) GROUP BY bv ORDER BY ${order} LIMIT ${MAX_UNLIMITED_BREAKDOWN_VALUES}`;
    }
    const limit = this.params.add(this.filter.breakdown_limit, 'UInt32');
    const otherText = this.params.add(FUNNEL_BREAKDOWN_OTHER, 'String');
    const other = this.filter.breakdownValueIsList ? `[${otherText}]` : otherText;
    const countsByValue = Array.from({ length: n }, (_, i) => `countIf(${reached(i)}) OVER (PARTITION BY bv) AS c_${i + 1}`).join(', ');
    const read = columns.join(', ');
    const rankOrder = [...Array.from({ length: n }, (_, i) => `c_${n - i} DESC`), 'bv ASC'].join(', ');
    return `SELECT bv_final AS bv, ${measures}
FROM (
  SELECT ${read}, if(ranked <= ${limit}, bv, ${other}) AS bv_final FROM (
    SELECT bv, ${read}, dense_rank() OVER (ORDER BY ${rankOrder}) AS ranked FROM (
      SELECT bv, ${read}, ${countsByValue} FROM (${actors}))))
GROUP BY bv_final
ORDER BY ${orderBy('bv_final')}
LIMIT ${limit} + 1`;
  }
}
