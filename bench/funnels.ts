/**
 * Funnels benchmark: our endpoints (a 4-step funnel, its time to convert, an events correlation)
 * against hand-written minimal ClickHouse queries giving the same answers, on the trends
 * benchmark's generated events (bench/analytics-data.ts) plus 2 million shopping events this
 * benchmark adds (a quarter of the distinct ids never check out and see errors; sharing happens
 * only among the others), in the same run.
 *
 * - 4-step funnel: the hand-written query is ClickHouse's windowFunnel, which gives the step
 *   counts only; our answer also carries each step's average and median conversion time.
 * - time to convert: no built-in gives the times, so the hand-written query is the shortest
 *   whole-array reading of the rule (each next step at its first occurrence after the previous,
 *   inside the window from the start; the newest start reaching the last step).
 * - events correlation: windowFunnel's level per person joined with the set of other events
 *   each person has.
 *
 *   npm run bench:funnels          (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5)
 *
 * Prints, per query kind, the median latency of each and the ratio (target ≤ 1.5×), and checks
 * that both answered the same numbers.
 */
import { FROM, PDI, PERSON, PERSONS, startAnalyticsBench, TO } from './analytics-data';
import { printRatioTable, ratioRow, timeAgainstBaseline } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const SHOPPING_EVENTS = Math.round(EVENTS / 5);
const WINDOW_SECONDS = 14 * 86_400;
const STEPS = ['$pageview', 'add_to_cart', 'checkout', 'purchase'];
const FUNNEL = {
  events: STEPS.map((id, order) => ({ id, order })),
  date_from: '2024-01-02',
  date_to: '2024-01-31',
  funnel_window_interval: 14,
  funnel_window_interval_unit: 'day',
};
const STEP_LIST = STEPS.map((s) => `'${s}'`).join(', ');
// Every step's events inside the date range, as PostHog's funnel event query reads them.
const SPAN = `e.team_id = 1 AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO}`;
const START = `e.event = '${STEPS[0]}' AND e.timestamp <= ${TO}`;
const LEVELS = `SELECT ${PERSON} AS p, windowFunnel(${WINDOW_SECONDS})(toDateTime(e.timestamp), ${START}, ${STEPS.slice(1)
  .map((s) => `e.event = '${s}'`)
  .join(', ')}) AS level
  FROM events AS e ${PDI} WHERE ${SPAN} AND e.event IN (${STEP_LIST}) GROUP BY p HAVING level > 0`;
/** Each position's chain time of step `step`, from the nearest later position holding it (arrayReverseFill from the right); -1 for none. */
const next = (values: string, step: number) =>
  `arrayPushBack(arrayPopFront(arrayReverseFill((v, s) -> s, arrayMap((v, x) -> if(x = ${step}, v, -1.), ${values}, xs), arrayMap(x -> x = ${step}, xs))), -1.)`;
/** Per person, sorted step events: `ts` (seconds) and `xs` (step index), plus `extra` columns (name → aggregate) of the same grouping. */
const STEP_ARRAYS = (extra: Record<string, string> = {}, where = `e.event IN (${STEP_LIST})`) => {
  const names = Object.keys(extra)
    .map((n) => `, ${n}`)
    .join('');
  const columns = Object.entries(extra)
    .map(([n, sql]) => `, ${sql} AS ${n}`)
    .join('');
  return `SELECT arrayMap(v -> v.1, evs) AS ts, arrayMap(v -> v.2, evs) AS xs${names} FROM (
        SELECT ${PERSON} AS p, arraySort(groupArrayIf((toFloat64(toUnixTimestamp64Micro(e.timestamp)) / 1000000, indexOf([${STEP_LIST}], e.event) - 1), e.event IN (${STEP_LIST}))) AS evs${columns}
        FROM events AS e ${PDI} WHERE ${SPAN} AND ${where} GROUP BY p)`;
};
/** Per person: for every position, the time of the chain's next step, then the newest start reaching the last step. */
const CONVERSION_SECONDS = (() => {
  // The chain's step-3 time seen from each step-2, step-1 and step-0 position; and its step-0 time is the position's own.
  const fromStart = next(next(next('ts', 3), 2), 1);
  return `SELECT arrayMax(arrayMap((t, x, t3) -> if(x = 0 AND t <= 1706745599.999999 AND t3 >= 0 AND t3 - t <= ${WINDOW_SECONDS}, t, 0.), ts, xs, last)) AS start,
      arrayMax(arrayMap((t, x, t3) -> if(t = start AND x = 0, t3, -1.), ts, xs, last)) - start AS seconds
    FROM (SELECT ts, xs, ${fromStart} AS last FROM (${STEP_ARRAYS()}))
    WHERE start > 0`;
})();
/**
 * Per person who started: the level reached (the most steps from one start, inside the window),
 * the newest start reaching it, and the end of its time in the funnel (the last step's time for a
 * conversion, else the start plus the window); `ots`/`ons` are the person's other events.
 */
const CHAINS = (() => {
  const reached = (t: string) => `(${t} >= 0 AND ${t} - t <= ${WINDOW_SECONDS})`;
  const levels = `arrayMap((t, x, a, b, c) -> if(x = 0, 1 + ${reached('a')} + ${reached('b')} + ${reached('c')}, 0), ts, xs, t1, t2, t3)`;
  return `SELECT level, start, if(level = ${STEPS.length}, arrayMax(arrayMap((t, l, c) -> if(t = start AND l = ${STEPS.length}, c, -1.), ts, levels, t3)), start + ${WINDOW_SECONDS}) AS until, ots, ons
    FROM (SELECT *, ${levels} AS levels, arrayMax(levels) AS level, arrayMax(arrayMap((t, l) -> if(l = level, t, 0.), ts, levels)) AS start
      FROM (SELECT *, ${next('ts', 1)} AS t1, ${next(next('ts', 2), 1)} AS t2, ${next(next(next('ts', 3), 2), 1)} AS t3
        FROM (${STEP_ARRAYS(
          {
            ots: `groupArrayIf(toFloat64(toUnixTimestamp64Micro(e.timestamp)) / 1000000, e.event NOT IN (${STEP_LIST}))`,
            ons: `groupArrayIf(e.event, e.event NOT IN (${STEP_LIST}))`,
          },
          '1',
        )})))
    WHERE level > 0`;
})();

interface Kind {
  name: string;
  ours(bench: Awaited<ReturnType<typeof startAnalyticsBench>>): Promise<number[]>;
  baseline: string;
  /** The baseline's rows as the numbers to compare. */
  numbers(rows: Record<string, unknown>[]): number[];
}

const KINDS: Kind[] = [
  {
    name: '4-step funnel',
    ours: async (b) => (await b.post<{ result: { count: number }[] }>('/api/projects/1/insights/funnel/', FUNNEL)).result.map((s) => s.count),
    baseline: `SELECT ${STEPS.map((_, i) => `countIf(level >= ${i + 1})`).join(', ')} FROM (${LEVELS})`,
    numbers: (rows) => Object.values(rows[0]!).map(Number),
  },
  {
    name: 'time to convert',
    ours: async (b) => {
      const r = await b.post<{ result: { bins: [number, number][]; average_conversion_time: number } }>('/api/projects/1/insights/funnel/', {
        ...FUNNEL,
        funnel_viz_type: 'time_to_convert',
      });
      return [r.result.bins.reduce((n, [, c]) => n + c, 0), Math.round(r.result.average_conversion_time * 1000)];
    },
    baseline: `SELECT count() AS n, avg(seconds) AS average FROM (${CONVERSION_SECONDS})`,
    numbers: (rows) => [Number(rows[0]!['n']), Math.round(Number(rows[0]!['average']) * 1000)],
  },
  {
    name: 'events correlation',
    ours: async (b) => {
      const r = await b.post<{ result: { events: { event: { event: string }; success_count: number; failure_count: number }[] } }>(
        '/api/projects/1/insights/funnel/correlation/',
        FUNNEL,
      );
      return r.result.events.flatMap((e) => [e.success_count, e.failure_count]).sort((x, y) => x - y);
    },
    // PostHog's correlation reads each person's other events inside their time in the funnel.
    baseline: `SELECT name, countIf(level = ${STEPS.length}) AS s, countIf(level < ${STEPS.length}) AS fl
      FROM (SELECT level, arrayDistinct(arrayFilter((n, t) -> t > start AND t < until, ons, ots)) AS names FROM (${CHAINS}))
      ARRAY JOIN names AS name
      GROUP BY name`,
    numbers: (rows) => rows.flatMap((r) => [Number(r['s']), Number(r['fl'])]).sort((x, y) => x - y),
  },
];

/** The shopping events: a quarter of the distinct ids never check out and see errors; only the others share. */
async function addShoppingEvents(bench: Awaited<ReturnType<typeof startAnalyticsBench>>): Promise<void> {
  await bench.ch.command({
    query: `INSERT INTO events (uuid, event, properties, timestamp, team_id, distinct_id, created_at, person_id, person_properties)
      SELECT generateUUIDv4(number), name, '{}', toDateTime64('2024-01-01 00:00:00', 6, 'UTC') + toIntervalMillisecond(intDiv(number * 2678400000, ${SHOPPING_EVENTS})),
             1, concat('user', toString(d)), now64(6), toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(d), 12, '0'))), '{}'
      FROM (SELECT number, cityHash64(number, 7) % ${PERSONS} AS d,
                   if(d % 4 = 0, ['add_to_cart', 'search', 'saw_error', 'saw_error'], ['add_to_cart', 'checkout', 'search', 'share'])[cityHash64(number, 8) % 4 + 1] AS name
            FROM numbers(${SHOPPING_EVENTS}))`,
  });
  await bench.ch.command({ query: 'OPTIMIZE TABLE events FINAL' });
}

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
  await addShoppingEvents(bench);
  const rows: string[][] = [];
  let worst = 0;
  for (const kind of KINDS) {
    const baseline = async () => (await bench.ch.query({ query: kind.baseline, format: 'JSONEachRow' })).json<Record<string, unknown>>();
    const timed = await timeAgainstBaseline(RUNS, () => kind.ours(bench), baseline);
    const [lastOurs, lastBase] = [timed.lastOurs, kind.numbers(timed.lastBase)];
    const same = JSON.stringify(lastOurs) === JSON.stringify(lastBase);
    const { row, ratio } = ratioRow(
      kind.name,
      timed,
      same ? 'yes' : `NO (${JSON.stringify(lastOurs).slice(0, 60)} vs ${JSON.stringify(lastBase).slice(0, 60)})`,
    );
    worst = Math.max(worst, ratio);
    rows.push(row);
  }
  printRatioTable(rows, { runs: RUNS, events: EVENTS + SHOPPING_EVENTS, worst });
  await bench.close();
  if (rows.some((r) => !r[4]!.startsWith('yes'))) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
