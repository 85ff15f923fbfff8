import { globalPrefix, SINGLE_SERVER } from '@sightline/clickhouse';
import { compilePropertyGroup, type PropertyGroup } from '@sightline/properties';
import type { QueryDateRange } from '../common/date-range';
import { EventsSql, PERSON_ID } from '../common/events-sql';
import { FunnelBreakdownSql } from './funnel-breakdown.sql';
import { exclusionFoldActorsSql } from './funnel-exclusion-fold.sql';
import { FIRST_TIME_STEP_MATHS, type ParsedFunnelFilter } from './funnel-filter';
import { unorderedFoldSql } from './funnel-unordered-fold.sql';
import { type QuerySqlPorts } from '../common/query-ports';

export interface FunnelQueryInput {
  filter: ParsedFunnelFilter;
  /** Query-wide filters (with test-account filters when asked). */
  properties: PropertyGroup;
  range: QueryDateRange;
  /** A cohort breakdown's cohort for this query (null: none). */
  cohortId: number | null;
}

/**
 * The SQL of a funnel: every event that matches a step (or an exclusion) is read once, grouped
 * per actor in time order, and folded (arrayFold) into the furthest chain of steps the actor
 * completed inside the conversion window, with each step's time. A chain starts at a first-step
 * event inside the date range.
 *
 * - ordered: for each level the most recent start that reached it is kept, with the first time
 *   each later step followed (so a person reaches step k when some start has k steps in order);
 * - strict: the next step must be the actor's very next event (every event of the actor is read);
 * - unordered: the most distinct steps held inside a window, the oldest of them in the range.
 * With exclusions, ordered and strict funnels fold as PostHog's UDF does (funnel-exclusion-fold.sql.ts);
 * unordered funnels always do (funnel-unordered-fold.sql.ts).
 */
export class FunnelSqlBuilder extends EventsSql {
  protected readonly breakdown: FunnelBreakdownSql;

  constructor(
    protected readonly input: FunnelQueryInput,
    ports: QuerySqlPorts,
  ) {
    super(
      {
        teamId: ports.teamId,
        nowMs: ports.nowMs,
        timezone: input.range.timezone,
        interval: input.range.interval,
        weekStartDay: input.range.weekStartDay,
        // A cohort breakdown runs one query per cohort, each reading its members only.
        breakdowns: input.filter.breakdowns.filter((b) => b.type !== 'cohort'),
        aggregationGroupTypeIndex: input.filter.aggregation_group_type_index,
      },
      ports,
    );
    this.breakdown = new FunnelBreakdownSql(input.filter, this.params, this.scope.breakdowns);
  }

  /**
   * What the funnel counts: a group of the aggregated type, else the value of
   * `funnel_aggregate_by_hogql` on each event (as text), else the person (PostHog's
   * `_aggregation_target_expr`, funnel_event_query.py, in that order).
   */
  private actorSqlCache: string | undefined;
  protected override actorSql(): string {
    const expression = this.input.filter.aggregateByHogQL;
    if (this.scope.aggregationGroupTypeIndex !== null || expression === null) return super.actorSql();
    return (this.actorSqlCache ??= `ifNull(toString(${this.ports.hogql(expression, this.params, { allowAggregations: false })}), '')`);
  }

  /** An event counts when its actor is there: PostHog leaves out an empty aggregation target; a deleted person's events stay out. */
  protected override actorPresentSql(): string {
    if (this.scope.aggregationGroupTypeIndex !== null || this.input.filter.aggregateByHogQL === null) return super.actorPresentSql();
    return `${super.actorPresentSql()} AND ${this.actorSql()} != ''`;
  }

  /** An entity's (step's or exclusion's) event or action match and its own filters, each null when it has none. */
  private entityParts(actionId: number | null, event: string | null, properties: PropertyGroup): { event: string | null; filters: string | null } {
    return {
      event:
        actionId !== null ? this.ports.actionMatch(actionId, this.compileContext()) : event !== null ? `e.event = ${this.params.add(event, 'String')}` : null,
      filters: properties.values.length > 0 ? compilePropertyGroup(properties, this.compileContext()) : null,
    };
  }

  private stepSql(step: ParsedFunnelFilter['steps'][number]): string {
    const isAction = step.kind === 'actions';
    const { event, filters } = this.entityParts(isAction ? Number(step.id) : null, isAction || step.id === null ? null : String(step.id), step.properties);
    const parts = [event, filters].filter((p): p is string => p !== null);
    if (FIRST_TIME_STEP_MATHS.has(step.math)) parts.push(this.firstTimeEventSql(event, filters, step.math === 'first_time_for_user_with_filters'));
    return parts.length ? parts.join(' AND ') : '1';
  }

  /**
   * Whether an event is the person's first-ever one of a first-time step, as PostHog's
   * FirstTimeForUserAggregationQuery picks it: among the person's events of the step's event (or
   * action) up to the range's end, the earliest; it counts only when it falls inside the range
   * and, for first_time_for_user, also matches the step's filters. With filters
   * (first_time_for_user_with_filters) the earliest event matching event and filters is taken.
   * Query-wide filters do not take part, as in PostHog.
   */
  private firstTimeEventSql(event: string | null, filters: string | null, withFilters: boolean): string {
    const { range } = this.input;
    const where = [`e.team_id = ${this.team}`, `e.timestamp <= ${this.dateTime(range.to.toMillis())}`, event, withFilters ? filters : null];
    const counted = [`e.timestamp >= ${this.dateTime(range.from.toMillis())}`, withFilters ? null : filters];
    const global = globalPrefix(this.ports.layout ?? SINGLE_SERVER);
    return `e.uuid ${global}IN (
      SELECT argMin(e.uuid, e.timestamp) {FROM}
      WHERE ${where.filter((w): w is string => w !== null).join(' AND ')}
      GROUP BY ${PERSON_ID}
      HAVING min(e.timestamp) = minIf(e.timestamp, ${counted.filter((c): c is string => c !== null).join(' AND ')}))`;
  }

  private exclusionSql(exclusion: ParsedFunnelFilter['exclusions'][number]): string {
    const { event, filters } = this.entityParts(exclusion.actionId, exclusion.event, exclusion.properties);
    const parts = [event, filters].filter((p): p is string => p !== null);
    return parts.length ? parts.join(' AND ') : '1';
  }

  /** Bit k (1..steps-1): the event is an exclusion between steps k-1 and k (PostHog's exclusion_k). */
  private exclusionLevelMask(): string {
    const { exclusions, steps } = this.input.filter;
    const sqls = this.exclusionSqls();
    const bits: string[] = [];
    for (let k = 1; k < steps.length; k++) {
      const covering = exclusions.flatMap((x, i) => (x.fromStep < k && k <= x.toStep ? [sqls[i]!] : []));
      if (covering.length) bits.push(`if(${covering.map((sql) => `(${sql})`).join(' OR ')}, ${2 ** k}, 0)`);
    }
    return bits.length ? bits.join(' + ') : '0';
  }

  /** An instant as microseconds: funnels compare times in whole microseconds, so windows and ranges are exact. */
  protected micros(ms: number): string {
    return this.params.add(ms * 1000, 'Float64');
  }

  /**
   * The events a funnel reads, one row each: `actor`, `t` (microseconds as Float64, exact),
   * `mask` (bit i: matches step i), `xmask` (bit i: matches exclusion i), `bv` (raw breakdown
   * value) and, when `key` is given, `k` (its sort key). `{FROM}` stands for the sources.
   */
  protected eventRowsSql(mask: string, xmask: string, key: string | null): string {
    const { filter, range } = this.input;
    const fromMs = range.from.toMillis();
    const toMs = range.to.toMillis();
    const bv = this.breakdown.rowValueSql(this.scope.breakdowns.map((b, i) => this.breakdownValueSql(b, i)));
    const where = [
      `e.team_id = ${this.team}`,
      `e.timestamp >= ${this.dateTime(fromMs)}`,
      `e.timestamp <= ${this.dateTime(toMs)}`,
      compilePropertyGroup(this.input.properties, this.compileContext()),
    ];
    if (filter.orderType !== 'strict') where.push(`(${[...this.stepSqls(), ...this.exclusionSqls()].join(' OR ')})`);
    // Every funnel counts actors: a group of the aggregated type, or a person not deleted.
    where.push(this.actorPresentSql());
    if (this.input.cohortId !== null) where.push(this.ports.cohortMembership(this.input.cohortId, PERSON_ID, this.params));
    return `SELECT ${this.actorSql()} AS actor, toFloat64(toUnixTimestamp64Micro(e.timestamp)) AS t,
        toUInt64(${mask}) AS mask, toUInt64(${xmask}) AS xmask, ${bv} AS bv${key ? `, ${key} AS k` : ''}
      {FROM}
      WHERE ${where.filter((w) => w !== '1').join('\n        AND ')}`;
  }

  private stepSqlCache: string[] | undefined;
  protected stepSqls(): string[] {
    return (this.stepSqlCache ??= this.input.filter.steps.map((s) => this.stepSql(s)));
  }

  private exclusionSqlCache: string[] | undefined;
  protected exclusionSqls(): string[] {
    return (this.exclusionSqlCache ??= this.input.filter.exclusions.map((x) => this.exclusionSql(x)));
  }

  protected withSources(sql: string): string {
    const { range } = this.input;
    return sql.split('{FROM}').join(this.fromSql(sql, { fromMs: range.from.toMillis(), toMs: range.to.toMillis() }));
  }

  /** One row per actor who started the funnel in range: `bv`, `level` (steps reached), `times` (seconds of each). */
  actorsSql(): string {
    return this.withSources(this.actorsSqlWithoutSources());
  }

  protected actorsSqlWithoutSources(): string {
    const { filter, range } = this.input;
    const n = filter.steps.length;
    const window = this.params.add(filter.windowSeconds * 1_000_000, 'Float64');
    const fromMs = range.from.toMillis();
    const toMs = range.to.toMillis();
    const from = this.micros(fromMs);
    const to = this.micros(toMs);
    const mask = this.stepSqls()
      .map((sql, i) => `if(${sql}, ${2 ** i}, 0)`)
      .join(' + ');
    const exclusions = this.exclusionSqls();
    const inRange = (t: string) => `${t} >= ${from} AND ${t} <= ${to}`;
    if (this.foldsAsUdf()) {
      const rows = this.breakdown.attributedRowsSql(this.eventRowsSql(mask, this.exclusionLevelMask(), null), false);
      const perActor = `SELECT actor, ${this.breakdown.actorValueSql()} AS bv, arraySort(groupArray((t, mask, xmask))) AS evs
        FROM (${rows}) GROUP BY ${this.breakdown.groupBySql()} HAVING countIf(bitTest(mask, 0) AND ${inRange('t')}) > 0`;
      return exclusionFoldActorsSql({ perActor, steps: n, window, from, to, strict: filter.orderType === 'strict', optional: this.optionalSteps() });
    }
    const xmask = exclusions.length ? exclusions.map((sql, i) => `if(${sql}, ${2 ** i}, 0)`).join(' + ') : '0';
    const chained = filter.orderType === 'ordered' && filter.exclusions.length === 0;
    // The chain path sorts one number per event: microseconds since the range start, shifted
    // above the step bits (UInt128 when a long range and many steps do not fit in 64 bits).
    const key = chained ? this.eventKey(n, fromMs, toMs, mask) : null;
    const rows = this.breakdown.attributedRowsSql(this.eventRowsSql(mask, xmask, key?.sql ?? null), key !== null);
    const started = filter.orderType === 'unordered' ? 'mask != 0' : 'bitTest(mask, 0)';
    if (key) {
      // Sorting the keys sorts by time, then by mask, as tuples would; gathering and sorting one
      // number per event costs a fraction of what (time, mask) tuples cost.
      const perActor = `SELECT actor, ${this.breakdown.actorValueSql()} AS bv, arraySort(groupArray(k)) AS ks
      FROM (${rows}) GROUP BY ${this.breakdown.groupBySql()} HAVING countIf(${started} AND ${inRange('t')}) > 0`;
      return this.orderedChainsSql(n, window, from, to, key, this.levelFitsWindowFunnel(), perActor);
    }
    const perActor = `SELECT actor, ${this.breakdown.actorValueSql()} AS bv, arraySort(x -> x.1, groupArray((t, mask, xmask))) AS evs
      FROM (${rows}) GROUP BY ${this.breakdown.groupBySql()} HAVING countIf(${started} AND ${inRange('t')}) > 0`;
    const fold = this.foldSql(n, window, from, to);
    // Level 0: the actor's progress was excluded (unordered), so it is not in the funnel.
    return `SELECT actor, bv, level, arrayMap(x -> x / 1000000, times) AS times FROM (
      SELECT actor, bv, ${fold.state} AS state, ${fold.level} AS level, ${fold.times} AS times FROM (${perActor}))
      WHERE level > 0`;
  }

  /** The optional steps (`optionalInFunnel`), 0-indexed. */
  protected optionalSteps(): number[] {
    return this.input.filter.steps.flatMap((s, i) => (s.optionalInFunnel ? [i] : []));
  }

  /**
   * Whether the funnel takes the per-event fold that follows PostHog's UDF step by step
   * (funnel-exclusion-fold.sql.ts) rather than a faster path: an ordered or strict funnel with
   * exclusions or optional steps, which only the fold knows.
   */
  protected foldsAsUdf(): boolean {
    const { filter } = this.input;
    return filter.orderType !== 'unordered' && (filter.exclusions.length > 0 || this.optionalSteps().length > 0);
  }

  /**
   * Whether ClickHouse's windowFunnel finds the same level as the chain rule: an ordered funnel
   * without exclusions whose steps are distinct event names (with or without properties), so no
   * event matches two steps. windowFunnel keeps, per level, the latest start that reached it and
   * moves a level up at any later event of the next step within the window from that start: the
   * longest of the chains the rule follows (each next step at its first occurrence after the
   * previous, the window measured from the start). It orders events by time, then by step, as the
   * chain path does, and compares whole microseconds as the chain path does.
   */
  private levelFitsWindowFunnel(): boolean {
    const { filter } = this.input;
    const names = filter.steps.map((s) => (s.kind === 'events' && s.id !== null ? String(s.id) : null));
    return (
      filter.orderType === 'ordered' &&
      filter.exclusions.length === 0 &&
      filter.steps.length <= 32 &&
      names.every((name) => name !== null) &&
      new Set(names).size === names.length
    );
  }

  /**
   * An event's sort key for the chain path: its microseconds since `fromMs` shifted left by the
   * number of steps, plus its step mask. Sorted keys are in (time, mask) order, and the time is
   * recovered exactly (`time`: the event's `t`, microseconds as Float64). `bit` tests a step.
   */
  private eventKey(
    steps: number,
    fromMs: number,
    untilMs: number,
    mask: string,
  ): { sql: string; time: (k: string) => string; bit: (k: string, step: number) => string } {
    // One spare bit: the span includes the last microsecond of its last millisecond.
    const wide = Math.log2((untilMs - fromMs + 1) * 1000 + 1) + steps + 1 > 64;
    const origin = this.params.add(fromMs * 1000, 'Int64');
    return {
      sql: `bitShiftLeft(${wide ? 'toUInt128' : 'toUInt64'}(toUnixTimestamp64Micro(e.timestamp) - ${origin}), ${steps}) + toUInt64(${mask})`,
      time: (k) => `toFloat64(bitShiftRight(${k}, ${steps}) + ${origin})`,
      // bitTest does not take 128-bit integers.
      bit: (k, step) => (wide ? `bitAnd(${k}, ${2 ** step}) != 0` : `bitTest(${k}, ${step})`),
    };
  }

  /**
   * An ordered funnel without exclusions, computed with whole-array passes instead of a fold
   * (arrayFold re-evaluates its lambda once per event position, which made this the slowest
   * part of a funnel). It answers what the fold answers: the chain a start follows takes, for
   * each next step, the first matching event after the previous step's event; an actor's level
   * is the longest chain within the window from a start inside the range, and its times are
   * those of the most recent start reaching that level.
   *
   * `c_k_m` holds, at every position q that is step m of a chain, the time of that chain's step
   * k (-1: the chain never gets there). It is built from the last step backwards: the value at
   * the next step-(m+1) event strictly after q, found for all q at once by arrayReverseFill over
   * the values with a closing -1 that counts as a step-(m+1) event, dropping the first result.
   */
  private orderedChainsSql(
    n: number,
    window: string,
    from: string,
    to: string,
    key: ReturnType<FunnelSqlBuilder['eventKey']>,
    oneStepPerEvent: boolean,
    perActor: string,
  ): string {
    // When no event matches two steps, most events cannot change the answer and are dropped
    // first: of consecutive first-step events, all but the last starting inside the range (its
    // chain is theirs, from a later start); of consecutive events of a later step, all but the
    // first (no chain takes the others); first-step events after the range (no start at all).
    const steps = 2 ** n - 1;
    const inRange = (k: string) => `${key.bit(k, 0)} AND ${key.time(k)} <= ${to}`;
    const events = oneStepPerEvent
      ? `arrayFilter((k, next, previous) -> if(${key.bit('k', 0)}, ${inRange('k')} AND NOT (${inRange('next')}), bitAnd(k, ${steps}) != bitAnd(previous, ${steps})),
          sorted, arrayPushBack(arrayPopFront(sorted), 0), arrayPushFront(arrayPopBack(sorted), 0))`
      : 'sorted';
    // b_s: whether each position is a step-s event, with the closing sentinel.
    const isStep = Array.from({ length: n - 1 }, (_, i) => `arrayPushBack(arrayMap(k -> ${key.bit('k', i + 1)}, ks), 1) AS b_${i + 1}`);
    const after = (values: string, step: number) => `arrayPopFront(arrayReverseFill((v, b) -> b, arrayPushBack(${values}, -1.), b_${step}))`;
    const columns: string[] = [];
    for (let k = 1; k < n; k++) {
      let values = 'ts';
      for (let m = k - 1; m >= 0; m--) {
        const name = `c_${k}_${m}`;
        columns.push(`${after(values, m + 1)} AS ${name}`);
        values = name;
      }
    }
    const chains = Array.from({ length: n - 1 }, (_, i) => `c_${i + 1}_0`);
    const args = chains.map((_, i) => `t${i + 1}`);
    const reached = ['1', ...args.map((t) => `(${t} >= 0 AND ${t} - t0 <= ${window})`)].join(' + ');
    // Level in the high half and position in the low half, so the maximum is the most recent start of the longest chain.
    const best = `arrayMax(arrayMap((t0, k, i${args.map((a) => `, ${a}`).join('')}) ->
        if(${key.bit('k', 0)} AND t0 >= ${from} AND t0 <= ${to}, bitShiftLeft(toUInt64(${reached}), 32) + i, toUInt64(0)),
        ts, ks, arrayEnumerate(ts)${chains.map((c) => `, ${c}`).join('')}))`;
    const times = `arrayMap(x -> x / 1000000, arraySlice([ts[start]${chains.map((c) => `, ${c}[start]`).join('')}], 1, level))`;
    return `SELECT actor, bv, level, times FROM (
      SELECT actor, bv, ${best} AS best, toUInt32(bitShiftRight(best, 32)) AS level, toUInt32(bitAnd(best, 4294967295)) AS start, ${times} AS times
      FROM (SELECT actor, bv, ts, ks, ${columns.join(', ')}
            FROM (SELECT actor, bv, ks, arrayMap(k -> ${key.time('k')}, ks) AS ts${isStep.map((b) => `, ${b}`).join('')}
                  FROM (SELECT actor, bv, ${events} AS ks FROM (SELECT actor, bv, ks AS sorted FROM (${perActor}))))))`;
  }

  /** The arrayFold of one actor's events (`evs`: (t, mask, xmask) in time order) and how to read its result. */
  private foldSql(n: number, window: string, from: string, to: string): { state: string; level: string; times: string } {
    const { filter } = this.input;
    const levels = `range(1, ${n + 1})`;
    const empty = '(toFloat64(-1), emptyArrayFloat64())';
    const start = `(bitTest(ev.2, 0) AND ev.1 >= ${from} AND ev.1 <= ${to})`;
    const advances = `(i > 1 AND bitTest(ev.2, i - 1) AND acc[i - 1].1 >= 0 AND ev.1 - acc[i - 1].1 <= ${window})`;
    if (filter.orderType === 'strict') {
      // Each level keeps the chain still running (it ends at the first event that does not
      // continue it) and the first chain that ever reached it.
      const current = `multiIf(${advances}, (acc[i - 1].1, arrayPushBack(acc[i - 1].2, ev.1)), i = 1 AND ${start}, (ev.1, [ev.1]), ${empty})`;
      const init = `arrayMap(i -> (toFloat64(-1), emptyArrayFloat64(), toFloat64(-1), emptyArrayFloat64()), ${levels})`;
      // Each level's running chain is written once, then read by a second map: ClickHouse plans
      // a fold's lambda per use, and six copies of it made strict funnels slow to plan.
      const step = `arrayMap((c, a) -> (c.1, c.2, if(a.3 < 0 AND c.1 >= 0, c.1, a.3), if(a.3 < 0 AND c.1 >= 0, c.2, a.4)),
          arrayMap(i -> ${current}, ${levels}), acc)`;
      const state = `arrayFold((acc, ev) -> ${step}, evs, ${init})`;
      return { state, level: 'arrayLastIndex(s -> s.3 >= 0, state)', times: 'if(level > 0, state[level].4, emptyArrayFloat64())' };
    }
    return unorderedFoldSql({ steps: n, window, to });
  }

  /** Step counts and conversion times per breakdown value (see FunnelBreakdownSql.stepsByValueSql). */
  stepsSql(): string {
    const n = this.input.filter.steps.length;
    // With optional steps an actor counts at each step its furthest chain took, and `times` holds
    // the times of its required steps only (funnel_udf.py `steps_bitfield`, steps.rs).
    const optional = this.optionalSteps().length > 0;
    const reached = (i: number) => (optional ? `bitTest(reached, ${i})` : `level >= ${i + 1}`);
    const counts = Array.from({ length: n }, (_, i) => `countIf(${reached(i)})`).join(', ');
    const gap = (i: number) => `times[${i + 1}] - times[${i}]`;
    // As PostHog's UDF funnel (funnel_udf.py): a step's times are those of the actors who reached
    // it in more than no time, and the median interpolates between the two middle ones of an even
    // count (ClickHouse's median; test_funnel_step_conversion_times: 3600 and 7200 give 5400).
    // With optional steps the i-th gap is between the i-th and (i+1)-th required steps taken, and
    // PostHog reports it at step i as it does without them (funnel_udf.py `timings[i]`).
    const timed = (i: number) => `${optional ? `length(times) > ${i}` : `level >= ${i + 1}`} AND ${gap(i)} > 0`;
    const averages = Array.from({ length: n }, (_, i) => (i === 0 ? 'toFloat64(nan)' : `avgIf(${gap(i)}, ${timed(i)})`)).join(', ');
    const medians = Array.from({ length: n }, (_, i) =>
      i === 0 ? 'toFloat64(nan)' : `if(countIf(${timed(i)}) = 0, nan, toFloat64(quantileExactInclusiveIf(0.5)(${gap(i)}, ${timed(i)})))`,
    ).join(', ');
    // Without a breakdown there is one value and nothing to rank.
    if (!this.breakdown.active) return `SELECT '' AS bv, [${counts}] AS counts, [${averages}] AS averages, [${medians}] AS medians FROM (${this.actorsSql()})`;
    return this.breakdown.stepsByValueSql(this.actorsSql(), counts, averages, medians, reached, optional ? ['level', 'times', 'reached'] : ['level', 'times']);
  }

  /** Seconds from step `from` to step `to` of every actor who got that far. */
  conversionTimesSql(fromStep: number, toStep: number): string {
    return `SELECT times[${toStep + 1}] - times[${fromStep + 1}] AS seconds FROM (${this.actorsSql()}) WHERE level >= ${toStep + 1}`;
  }
}
