import { FunnelSqlBuilder } from './funnel.sql';

/**
 * The SQL of a funnel's conversion trend (`funnel_viz_type: trends`): per breakdown value and
 * period, how many actors entered the funnel in that period and how many of those converted.
 *
 * It follows PostHog's UDF funnel trends (funnel-udf/src/trends.rs and unordered_trends.rs,
 * test_funnel_trends_udf.py): an actor counts once in every period in which one of its funnel
 * entries falls, so one person can be in several periods. Each period is followed on its own
 * over the actor's events in time order:
 *
 * - ordered / strict: a first-step event of the period (re)starts the chain; a later step moves
 *   the chain on when it comes within the conversion window of the chain's start; reaching
 *   `to_step` converts the period for good. An exclusion event between two steps, inside the
 *   window, marks the step before it: a period whose furthest step is so marked does not count
 *   (a "partial" exclusion), and a period whose chain went on past a marked step ("full")
 *   makes the actor's unconverted periods all drop out. Strict funnels forget every step the
 *   actor's next event does not match.
 * - unordered: every event starts a window; the distinct steps seen in it (up to the next
 *   exclusion, which forgets everything) are that window's level, and a period keeps the best
 *   level of the windows starting in it. A window an exclusion cuts short counts only when it
 *   had already seen every step.
 *
 * A period counts an actor as entered when its furthest step reaches `funnel_from_step`, and as
 * converted when it reaches `funnel_to_step`.
 */
export class FunnelTrendsSqlBuilder extends FunnelSqlBuilder {
  /** Rows of `bv` (breakdown value, first touch), `b` (period, as `days` writes it), `entered`, `converted`. */
  trendsSql(): string {
    const { filter } = this.input;
    const inner = filter.orderType === 'unordered' ? this.unorderedOutcomesSql() : this.orderedOutcomesSql();
    return this.withSources(`SELECT bv, b, countIf(outcome != 0) AS entered, countIf(outcome = 1) AS converted
      FROM (${inner}) GROUP BY bv, b`);
  }

  /**
   * One row per actor and period it entered the funnel in: `actor`, `bv`, `b` (the period, as
   * trendsSql writes it) and `outcome` (1 converted, -1 entered but not converted, 0 not counted).
   */
  actorOutcomesSql(): string {
    const { filter } = this.input;
    return this.withSources(filter.orderType === 'unordered' ? this.unorderedOutcomesSql() : this.orderedOutcomesSql());
  }

  /** Per actor: the first-touch breakdown value and its events `(t, mask, xmask, start period or '')` in time order. */
  private perActorSql(started: string): string {
    const { range } = this.input;
    const mask = this.stepSqls()
      .map((sql, i) => `if(${sql}, ${2 ** i}, 0)`)
      .join(' + ');
    const exclusions = this.exclusionSqls();
    const xmask = exclusions.length ? exclusions.map((sql, i) => `if(${sql}, ${2 ** i}, 0)`).join(' + ') : '0';
    const from = this.micros(range.from.toMillis());
    const to = this.micros(range.to.toMillis());
    const entry = `${started} AND t >= ${from} AND t <= ${to}`;
    const period = `toString(${this.bucketSql(`toDateTime64(t / 1000000, 6, 'UTC')`)})`;
    // The breakdown value follows breakdown_attribution_type as the funnel's steps read it
    // (FunnelBreakdownSql): all_events and step give an actor one row per value.
    const rows = this.breakdown.attributedRowsSql(this.eventRowsSql(mask, xmask, null), false);
    return `SELECT actor, ${this.breakdown.actorValueSql()} AS bv,
        arraySort(x -> x.1, groupArray((t, mask, xmask, if(${entry}, ${period}, '')))) AS evs
      FROM (${rows}) GROUP BY ${this.breakdown.groupBySql()} HAVING countIf(${entry}) > 0`;
  }

  /**
   * Ordered and strict funnels: each event becomes one item per step it matches (an exclusion
   * of the step k it guards as -k, before the steps, highest first, as the UDF reads them), and
   * in a strict funnel a closing 0 that forgets the steps the event does not match. Each period
   * folds the items with its own state:
   * (entered start time per step, excluded flag per step, furthest step, its time, its
   * exclusion 0 none / 1 partial / 2 full, period open, period converted).
   */
  private orderedOutcomesSql(): string {
    const { filter } = this.input;
    const n = filter.steps.length;
    const window = this.params.add(filter.windowSeconds * 1_000_000, 'Float64');
    const fromStep = filter.fromStep + 1;
    const toStep = filter.toStep + 1;
    // The UDF steps an exclusion guards: exclusion from a to b guards steps a+2 .. b+1 (1-based).
    const guarded = (j: string) =>
      filter.exclusions.length
        ? filter.exclusions.map((x, k) => `(bitTest(e.3, ${k}) AND ${j} >= ${x.fromStep + 2} AND ${j} <= ${x.toStep + 1})`).join(' OR ')
        : '0';
    const positives = `arrayReverse(arrayFilter(j -> bitTest(e.2, j - 1), range(1, ${n + 1})))`;
    const negatives = `arrayReverse(arrayMap(j -> -j, arrayFilter(j -> ${guarded('j')}, range(2, ${n + 1}))))`;
    const closing = filter.orderType === 'strict' ? ', [0]' : '';
    const items = `arrayFlatten(arrayMap(e -> arrayMap(s -> (e.1, toInt16(s), e.4, e.2), arrayConcat(${negatives}, ${positives}${closing})), evs))`;

    const setAt = (arr: string, index: string, value: string) => `arrayMap((v, i) -> if(i = ${index}, ${value}, v), ${arr}, arrayEnumerate(${arr}))`;
    const [t, s, ownPeriod, eventMask] = ['p.1', 'p.2', 'p.3', 'p.4'];
    const [ent, exc, maxStep, maxT, maxExcl, open, converted] = ['a.1', 'a.2', 'a.3', 'a.4', 'a.5', 'a.6', 'a.7'];
    const state = (parts: Partial<Record<'ent' | 'exc' | 'maxStep' | 'maxT' | 'maxExcl' | 'open' | 'converted', string>>) =>
      `(${parts.ent ?? ent}, ${parts.exc ?? exc}, toInt16(${parts.maxStep ?? maxStep}), toFloat64(${parts.maxT ?? maxT}), toUInt8(${parts.maxExcl ?? maxExcl}), toUInt8(${parts.open ?? open}), toUInt8(${parts.converted ?? converted}))`;
    const zeros = `arrayWithConstant(${n}, toFloat64(0))`;
    const noFlags = `arrayWithConstant(${n}, toUInt8(0))`;

    // A first-step event of this period starts a chain (anew when none is open, or when the
    // open one got no further than an excluded first step), or moves the open chain's start.
    const restart = `${open} = 0 OR (${maxStep} = 1 AND ${maxExcl} != 0)`;
    const start = `if(${restart}, ${state({ ent: setAt(zeros, '1', t), exc: noFlags, maxStep: '1', maxT: t, maxExcl: '0', open: '1' })},
        ${state({ ent: setAt(ent, '1', t), exc: setAt(exc, '1', 'toUInt8(0)') })})`;

    const k = `toInt16(abs(${s}))`;
    const previous = `${ent}[${k} - 1]`;
    const applies = `${open} = 1 AND ${previous} != 0 AND ${t} - ${previous} <= ${window} AND ${ent}[${k}] != ${previous}`;
    const previousExcluded = `${exc}[${k} - 1] = 1`;
    const exclude = state({
      exc: `if(${previousExcluded}, ${exc}, ${setAt(exc, `${k} - 1`, 'toUInt8(1)')})`,
      maxExcl: `if(NOT (${previousExcluded}) AND ${maxStep} = ${k} - 1 AND ${t} - ${maxT} <= ${window}, 1, ${maxExcl})`,
    });
    const movedEnt = `if(${previousExcluded}, ${ent}, ${setAt(ent, k, previous)})`;
    const movedExc = `if(${previousExcluded}, ${exc}, ${setAt(exc, k, 'toUInt8(0)')})`;
    const reached = `(NOT (${previousExcluded}) AND ${k} = ${toStep}) OR ${ent}[${toStep}] != 0`;
    const furthest = `${k} > ${maxStep} OR (${k} = ${maxStep} AND ${maxExcl} = 1)`;
    const advance = `multiIf(${reached}, ${state({ ent: movedEnt, exc: movedExc, open: '0', converted: '1' })},
        ${furthest}, ${state({ ent: movedEnt, exc: movedExc, maxStep: k, maxT: t, maxExcl: `if(${previousExcluded}, 2, 0)` })},
        ${state({ ent: movedEnt, exc: movedExc })})`;
    const forget = state({
      ent: `arrayMap((v, i) -> if(bitTest(${eventMask}, i - 1), v, toFloat64(0)), ${ent}, arrayEnumerate(${ent}))`,
      exc: `arrayMap((v, i) -> if(bitTest(${eventMask}, i - 1), v, toUInt8(0)), ${exc}, arrayEnumerate(${exc}))`,
    });
    const step = `multiIf(${s} = 0, ${forget},
        ${s} = 1, if(${ownPeriod} AND ${converted} = 0, ${start}, ${state({})}),
        ${s} <= -2 AND ${applies}, ${exclude},
        ${s} >= 2 AND ${applies}, ${advance},
        ${state({})})`;
    const init = state({ ent: zeros, exc: noFlags, maxStep: '0', maxT: '0', maxExcl: '0', open: '0', converted: '0' });
    // A period's state changes only from its first entry to the window's end after its last
    // one (before, nothing is open; after, nothing is within the window of a start), so only
    // those items are folded: the work per period is bounded by the events of that span.
    const span = `arrayFilter(x -> x.1 >= b_first AND x.1 <= b_last + ${window}, items)`;
    const fold = `arrayFold((a, p) -> ${step}, arrayMap(x -> (x.1, x.2, x.3 = b, x.4), ${span}), ${init})`;
    const entries = `arrayMap(x -> x.1, arrayFilter(x -> x.4 = b, evs))`;
    return `SELECT actor, bv, b, if(st.7 = 1, 1, if(st.6 = 1 AND st.3 >= ${fromStep} AND st.5 != 1 AND NOT any_full, -1, 0)) AS outcome FROM (
        SELECT actor, bv, b, st, max(st.6 = 1 AND st.7 = 0 AND st.5 = 2) OVER (PARTITION BY actor, bv) AS any_full FROM (
          SELECT actor, bv, b, ${fold} AS st FROM (
            SELECT actor, bv, items, b, arrayMin(${entries}) AS b_first, arrayMax(${entries}) AS b_last FROM (
              SELECT actor, bv, evs, ${items} AS items, arrayJoin(arrayDistinct(arrayFilter(x -> x != '', arrayMap(x -> x.4, evs)))) AS b
              FROM (${this.perActorSql('bitTest(mask, 0)')})))))`;
  }

  /**
   * Unordered funnels: the level of the window starting at each event is the number of distinct
   * steps among it and the events after it within the conversion window, stopping at the next
   * exclusion; a window the exclusion falls inside counts only when complete. Each step's next
   * occurrence (and the next exclusion) at or after every event is found for all events at once
   * by arrayReverseFill, so the work grows with events × steps.
   */
  private unorderedOutcomesSql(): string {
    const { filter } = this.input;
    const n = filter.steps.length;
    const window = this.params.add(filter.windowSeconds * 1_000_000, 'Float64');
    // The time of the next event (at or after each position) flagged by `flag`; a closing
    // sentinel far in the future stands for "none".
    const nextTime = (flag: string) =>
      `arrayPopBack(arrayReverseFill((v, f) -> f, arrayPushBack(arrayMap(e -> e.1, evs), toFloat64(1e300)), arrayPushBack(arrayMap(e -> ${flag}, evs), 1)))`;
    const steps = Array.from({ length: n }, (_, s) => s);
    const nextSteps = steps.map((s) => `${nextTime(`bitTest(e.2, ${s})`)} AS next_${s}`);
    const level = steps.map((s) => `(next_${s} <= ev.1 + ${window} AND next_${s} < next_x)`).join(' + ');
    return `SELECT actor, bv, b, multiIf(level >= ${filter.toStep + 1}, 1, level >= ${filter.fromStep + 1}, -1, 0) AS outcome FROM (
        SELECT actor, bv, b, max(if(next_x > t + ${window} OR window_level = ${n}, window_level, 0)) AS level FROM (
          SELECT actor, bv, ev.1 AS t, ev.4 AS b, next_x, ${level} AS window_level
          FROM (SELECT actor, bv, evs, ${nextSteps.join(', ')}, ${nextTime('e.2 = 0 AND e.3 != 0')} AS next_x
                FROM (${this.perActorSql('mask != 0')}))
          ARRAY JOIN evs AS ev, ${steps.map((s) => `next_${s}`).join(', ')}, next_x
          WHERE ev.2 != 0 AND ev.4 != '')
        GROUP BY actor, bv, b)`;
  }
}
