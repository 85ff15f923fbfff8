/**
 * An unordered funnel folded the way PostHog's funnel UDF folds it
 * (funnel-udf/src/unordered_steps.rs, which test_funnel_unordered_udf.py asserts):
 *
 * - each step keeps a queue of the times it was seen; an event of several steps joins the step
 *   whose latest time is oldest (an empty step first, then the lowest step);
 * - before an event joins, the times older than its window are dropped, and while every step has
 *   a time the oldest are dropped too (a completed funnel starts over); whenever times are
 *   dropped, the steps held just before count, as does what is held after the last event;
 * - an exclusion event (one matching no step) forgets every time held, without counting them:
 *   progress not yet counted is lost.
 *
 * The furthest count is the actor's level; its times are the oldest time of each step held.
 * Sightline also asks that the oldest of them be inside the date range (a chain starts in range).
 */
export interface UnorderedFoldInput {
  /** Per actor, `evs`: (t, mask, xmask) in time order, t in microseconds. */
  steps: number;
  window: string;
  to: string;
}

const STATE = 'Tuple(Array(Array(Float64)), UInt32, Array(Float64), UInt8)';

/** The fold's expressions: `state` (over `evs`), and how to read `level` and `times` from it. */
export function unorderedFoldSql(input: UnorderedFoldInput): { state: string; level: string; times: string } {
  const { steps: n, window: w, to } = input;
  const levels = `range(1, ${n + 1})`;
  const bind = (name: string, value: string, body: string) => `arrayMap(${name} -> ${body}, [${value}])[1]`;
  const held = (queues: string) => `arraySort(arrayMap(q -> q[1], arrayFilter(q -> notEmpty(q), ${queues})))`;
  // The furthest count so far, replaced by what `queues` hold when they hold more (and start in range).
  const counted = (max: string, queues: string) =>
    bind('h', held(queues), `if(length(h) > ${max}.1 AND h[1] <= ${to}, (toUInt32(length(h)), h), ${max})`);

  // Times out of this event's window dropped; then, when every step still has a time, the oldest
  // dropped until the step whose latest time is oldest is empty.
  const inWindow = `arrayMap(q -> arrayFilter(v -> v >= x.1 - ${w}, q), acc.1)`;
  const restart = bind(
    'b',
    'arrayMap(q -> q[-1], W)',
    `if(arrayAll(q -> notEmpty(q), W), arrayMap((q, i) -> if(i = arrayFirstIndex(v -> v = arrayMin(b), b), emptyArrayFloat64(), arrayFilter(v -> v >= arrayMin(b), q)), W, ${levels}), W)`,
  );
  const kept = bind('W', inWindow, restart);
  // The step an event of several steps joins: the one whose latest time is oldest (empty: 0).
  const joins = `arrayFirstIndex(v -> v = arrayMin(c), c)`;
  const latest = `arrayMap((q, k) -> if(bitTest(x.2, k - 1), if(empty(q), toFloat64(0), q[-1]), toFloat64(inf)), K, ${levels})`;
  const joined = `if(x.2 = 0, arrayMap(q -> emptyArrayFloat64(), K), ${bind('c', latest, `arrayMap((q, k) -> if(k = ${joins}, arrayPushBack(q, x.1), q), K, ${levels})`)})`;
  const max = '(acc.2, acc.3)';
  const afterDrop = `if(length(arrayFlatten(K)) != length(arrayFlatten(acc.1)), ${counted(max, 'acc.1')}, ${max})`;
  const step = bind(
    'K',
    kept,
    bind('J', joined, bind('d', afterDrop, bind('m', `if(last, ${counted('d', 'J')}, d)`, `(J, m.1, m.2, toUInt8(m.1 = ${n}))`))),
  );
  const init = `(arrayMap(k -> emptyArrayFloat64(), ${levels}), toUInt32(0), emptyArrayFloat64(), toUInt8(0))`;
  const state = `arrayFold((acc, x, last) -> CAST(if(acc.4 = 1, acc, ${step}), '${STATE}'),
      evs, arrayMap(i -> i = length(evs), arrayEnumerate(evs)), CAST(${init}, '${STATE}'))`;
  return { state, level: 'state.2', times: 'state.3' };
}
