/**
 * An ordered or strict funnel with exclusions, folded the way PostHog's funnel UDF folds it
 * (funnel-udf/src/steps.rs, which test_funnel_udf.py / test_funnel_strict_udf.py assert):
 *
 * - `entered[k]` is the chain from the latest start that reached k steps (its start time, whether
 *   it was excluded, the times of its steps and the events it used). A step-k event within the
 *   window of `entered[k-1]`'s start copies it one step further, unless that chain already got
 *   there; an excluded chain is not copied on, but it still counts as the furthest.
 * - An exclusion event between steps k-1 and k (0-indexed), within the window of the chain at
 *   level k that has not yet reached k+1, marks that chain excluded; when the furthest chain so
 *   far is at that level and the event is within the window of its start, it is marked too.
 * - The furthest chain (the highest level, a non-excluded one replacing an excluded one at the
 *   same level) is the actor's answer; when it is excluded the actor drops out of the funnel.
 * - Events of one instant that are not all alike are taken step by step in step order, without
 *   their exclusions, no event used twice in a chain (steps.rs: "different events with the same
 *   timestamp"); a lone event's exclusions come before its steps.
 * - Strict: after each event, every level the event does not match is forgotten.
 * - Optional steps (`optionalInFunnel`): a step's event (or exclusion) whose previous step is
 *   optional and not reached within the window looks further back, over optional steps, to the
 *   nearest one reached within the window, or to the previous required step. An optional step
 *   adds no time (and uses no event) to its chain; each chain keeps the set of steps it took, and
 *   the actor counts at each step of the furthest chain's set (steps.rs `optional_steps`,
 *   funnel_udf.py `steps_bitfield`).
 *
 * Chains start at first-step events inside the date range; every time is in microseconds.
 */
export interface ExclusionFoldInput {
  /**
   * One row per actor (and breakdown value): `actor, bv, evs`, evs the actor's events as
   * (t, mask (bit i: step i), xmask (bit k: an exclusion between steps k-1 and k)) sorted.
   */
  perActor: string;
  steps: number;
  window: string;
  from: string;
  to: string;
  strict: boolean;
  /** The optional steps, 0-indexed (never step 0). */
  optional: readonly number[];
}

/** A chain: start, excluded, step times, events used, steps taken (bit i: step i). */
const ENTRY = 'Tuple(Float64, UInt8, Array(Float64), Array(UInt64), UInt64)';
/** The furthest chain: level, start, excluded, step times, steps taken. */
const STATE = `Tuple(Array(${ENTRY}), Tuple(UInt32, Float64, UInt8, Array(Float64), UInt64))`;
const UNSET = '(toFloat64(-1), toUInt8(0), emptyArrayFloat64(), emptyArrayUInt64(), toUInt64(0))';
/** Item kinds: an event's exclusions, its steps, then (strict) forgetting the levels it does not match. */
const EXCLUDE = 0;
const ADVANCE = 1;
const FORGET = 2;

/**
 * The levels (1-indexed) a step-`k` event or exclusion may continue from, nearest first: `k - 1`,
 * then further back while the one before is optional (steps.rs walks back the same way).
 */
function previousLevels(k: number, optional: ReadonlySet<number>): number[] {
  const levels = [k - 1];
  // Level j is step j-1 (0-indexed): optional when that step is.
  while (levels[levels.length - 1]! > 1 && optional.has(levels[levels.length - 1]! - 1)) levels.push(levels[levels.length - 1]! - 1);
  return levels;
}

/**
 * One row per actor who started in range and was not excluded: `actor, bv, level, times`
 * (seconds), and with optional steps `reached` (bit i: the actor counts at step i).
 */
export function exclusionFoldActorsSql(input: ExclusionFoldInput): string {
  const { perActor, steps: n, window: w, from, to, strict } = input;
  const optional = new Set(input.optional);
  const levels = `range(1, ${n + 1})`;
  const item = (kind: number, bits: string) => `(g.1, toUInt8(${kind}), toUInt64(${bits}), bitShiftLeft(toUInt64(gi), 24) + j)`;
  const whole = `arrayFlatten(arrayMap((e, j) -> [${[item(EXCLUDE, 'e.2'), item(ADVANCE, 'e.1'), ...(strict ? [item(FORGET, 'e.1')] : [])].join(', ')}],
      g.2, arrayEnumerate(g.2)))`;
  const split = `arraySort(x -> (x.3, x.4), arrayFlatten(arrayMap((e, j) ->
      arrayMap(b -> ${item(ADVANCE, 'bitShiftLeft(toUInt64(1), b)')}, arrayFilter(b -> bitTest(e.1, b), range(${n}))),
      g.2, arrayEnumerate(g.2))))`;
  const items = `arrayFilter(x -> x.2 = ${FORGET} OR x.3 != 0, arrayFlatten(arrayMap((g, gi) ->
      if(arrayAll(e -> e = g.2[1], g.2), ${whole}, ${split}), groups, arrayEnumerate(groups))))`;

  const E = 'acc.1';
  const M = 'acc.2';
  // A value used several times is computed once and bound by a one-element arrayMap: ClickHouse
  // analyses every copy of a repeated expression, and that analysis dominated the query's time.
  const bind = (name: string, value: string, body: string) => `arrayMap(${name} -> ${body}, [${value}])[1]`;

  const inWindow = (e: string) => `(${e}.1 >= 0 AND x.1 - ${e}.1 <= ${w})`;
  // X[i]: this event excludes the chain at level i (that chain did not reach i+1 and is in its window).
  let excludes = `arrayMap(i -> bitTest(x.3, i) AND ${E}[i].1 >= 0 AND x.1 - ${E}[i].1 <= ${w} AND ${E}[i + 1].1 != ${E}[i].1 AND ${E}[i].2 = 0, ${levels})`;
  if (optional.size > 0) {
    // An exclusion between steps i-1 and i (bit i) excludes the chain its step-i event would
    // continue: level i, or an earlier one past optional steps (the first in its window).
    const marks: string[][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 1; i < n; i++) {
      const candidates = previousLevels(i + 1, optional);
      candidates.forEach((j, c) => {
        const nearer = candidates.slice(0, c).map((l) => `NOT ${inWindow(`${E}[${l}]`)}`);
        marks[j]!.push([`bitTest(x.3, ${i})`, ...nearer, inWindow(`${E}[${j}]`), `${E}[${i + 1}].1 != ${E}[${j}].1`, `${E}[${j}].2 = 0`].join(' AND '));
      });
    }
    excludes = `[${marks
      .slice(1)
      .map((m) => (m.length ? `(${m.join(') OR (')})` : '0'))
      .join(', ')}]`;
  }
  const exclude = bind(
    'X',
    excludes,
    `(arrayMap((e, excluded) -> if(excluded, (e.1, toUInt8(1), e.3, e.4, e.5), e), ${E}, X),
      if(${M}.1 >= 1 AND X[${M}.1] AND x.1 - ${M}.2 <= ${w}, (${M}.1, ${M}.2, toUInt8(1), ${M}.4, ${M}.5), ${M}))`,
  );

  // P[k]: the chain a step-k event continues (start, excluded, step times, events, steps); at level 1 a new start inside the range.
  const start = `(if(x.1 >= ${from} AND x.1 <= ${to}, x.1, toFloat64(-1)), toUInt8(0), emptyArrayFloat64(), emptyArrayUInt64(), toUInt64(0))`;
  const previous =
    optional.size === 0
      ? `arrayMap(k -> if(k = 1, ${start}, ${E}[k - 1]), ${levels})`
      : `[${start}, ${Array.from({ length: n - 1 }, (_, i) => {
          const candidates = previousLevels(i + 2, optional).map((j) => `${E}[${j}]`);
          const last = candidates.pop()!;
          return candidates.length ? `multiIf(${candidates.map((c) => `${inWindow(c)}, ${c}`).join(', ')}, ${last})` : last;
        }).join(', ')}]`;
  // Q[k]: this event takes that chain to level k (in its window, not there yet, the event not used in it already).
  const continues = `arrayMap((k, p) -> bitTest(x.3, k - 1) AND p.1 >= 0 AND x.1 - p.1 <= ${w} AND ${E}[k].1 != p.1 AND NOT has(p.4, x.4), ${levels}, P)`;
  // An optional step adds no time and uses no event (O[k]: step k-1 is optional).
  const optionalLevels = `[${Array.from({ length: n }, (_, i) => (optional.has(i) ? 1 : 0)).join(', ')}]`;
  // Step k's bit; ClickHouse evaluates both branches of an if, so k = 0 (no step) must not shift by -1.
  const withBit = (p: string, k: string) => `toUInt64(bitOr(${p}.5, bitShiftLeft(toUInt64(1), toUInt8(greatest(${k}, 1) - 1))))`;
  const pushed = (p: string, k: string) =>
    optional.size === 0
      ? `arrayPushBack(${p}.3, x.1), arrayPushBack(${p}.4, x.4), ${withBit(p, k)}`
      : `if(${optionalLevels}[${k}] = 1, ${p}.3, arrayPushBack(${p}.3, x.1)), if(${optionalLevels}[${k}] = 1, ${p}.4, arrayPushBack(${p}.4, x.4)), ${withBit(p, k)}`;
  const entries = `arrayMap((e, p, q, k) -> if(q AND p.2 = 0, (p.1, toUInt8(0), ${pushed('p', 'k')}), e), ${E}, P, Q, ${levels})`;
  const furthest = `arrayMax(arrayMap((k, q) -> if(q, toUInt32(k), toUInt32(0)), ${levels}, Q))`;
  const newMax = bind(
    'r',
    furthest,
    `if(r > 0 AND (r > ${M}.1 OR (r = ${M}.1 AND ${M}.3 = 1)), ${bind('c', `(P[r].1, P[r].2, ${pushed('P[r]', 'r')})`, '(r, c.1, c.2, c.3, c.5)')}, ${M})`,
  );
  const advanceWithMax = bind('P', previous, bind('Q', continues, `(${entries}, ${newMax})`));
  const forget = `(arrayMap((k, e) -> if(bitTest(x.3, k - 1), e, ${UNSET}), ${levels}, ${E}), ${M})`;
  const fold = `arrayFold((acc, x) -> CAST(multiIf(x.2 = ${EXCLUDE}, ${exclude}, x.2 = ${ADVANCE}, ${advanceWithMax}, ${forget}), '${STATE}'),
      items, CAST((arrayMap(k -> ${UNSET}, ${levels}), (toUInt32(0), toFloat64(-1), toUInt8(0), emptyArrayFloat64(), toUInt64(0))), '${STATE}'))`;

  // The events of each instant together: (t, [(mask, xmask), ...]).
  const groups = `arrayMap(g -> (g[1].1, arrayMap(e -> (e.2, e.3), g)), arraySplit((e, p) -> e.1 != p.1, evs, arrayPushFront(arrayPopBack(evs), evs[1])))`;
  return `SELECT actor, bv, level, arrayMap(x -> x / 1000000, state.2.4) AS times${optional.size ? ', state.2.5 AS reached' : ''} FROM (
    SELECT actor, bv, ${fold} AS state, if(state.2.3 = 1, toUInt32(0), state.2.1) AS level FROM (
      SELECT actor, bv, ${items} AS items FROM (SELECT actor, bv, ${groups} AS groups FROM (${perActor}))))
  WHERE level > 0`;
}
