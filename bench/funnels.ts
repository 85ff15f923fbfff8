/**
 * Funnels benchmark: our endpoints (a 4-step funnel, its time to convert, an events correlation)
 * against hand-written minimal ClickHouse queries giving the same answers, on the trends
 * benchmark's generated events (bench/analytics-data.ts), in the same run. The hand-written
 * funnel uses ClickHouse's windowFunnel; time to convert and correlation have no built-in, so
 * theirs are the shortest queries that answer the same (first step in range, each next step's
 * first occurrence after the previous, inside the window).
 *
 *   npm run bench:funnels          (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5)
 *
 * Prints, per query kind, the median latency of each and the ratio (target ≤ 1.5×), and checks
 * that both answered the same numbers.
 */
import { FROM, PDI, PERSON, startAnalyticsBench } from './analytics-data';
import { median, printRatioTable } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const WINDOW_SECONDS = 14 * 86_400;
const STEPS = ['$pageview', 'signup', '$pageview', 'purchase'];
const FUNNEL = {
  events: STEPS.map((id, order) => ({ id, order })),
  date_from: '2024-01-02',
  date_to: '2024-01-31',
  funnel_window_interval: 14,
  funnel_window_interval_unit: 'day',
};
/** Events from the range start to its end plus the window (the data ends with January). */
const RANGE = `e.team_id = 1 AND e.timestamp >= ${FROM} AND e.timestamp <= toDateTime64('2024-02-14 23:59:59.999999', 6, 'UTC') AND e.event IN ('$pageview', 'signup', 'purchase')`;
const LEVELS = `SELECT ${PERSON} AS p, windowFunnel(${WINDOW_SECONDS})(toDateTime(e.timestamp), ${STEPS.map((s) => `e.event = '${s}'`).join(', ')}) AS level
  FROM events AS e ${PDI} WHERE ${RANGE} GROUP BY p`;

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
    baseline: `SELECT ${STEPS.map((_, i) => `countIf(level >= ${i + 1})`).join(', ')} FROM (${LEVELS}) WHERE level > 0`,
    numbers: (rows) => Object.values(rows[0]!).map(Number),
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
    baseline: `SELECT e.event AS name, uniqExactIf(f.p, f.level = ${STEPS.length}) AS s, uniqExactIf(f.p, f.level < ${STEPS.length}) AS fl
      FROM events AS e ${PDI} JOIN (${LEVELS}) AS f ON f.p = ${PERSON}
      WHERE e.team_id = 1 AND e.timestamp >= ${FROM} AND e.timestamp <= toDateTime64('2024-02-14 23:59:59.999999', 6, 'UTC') AND f.level > 0
        AND e.event NOT IN ('$pageview', 'signup', 'purchase')
      GROUP BY name`,
    numbers: (rows) => rows.flatMap((r) => [Number(r['s']), Number(r['fl'])]).sort((x, y) => x - y),
  },
];

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
  const timed = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
    const started = performance.now();
    const value = await fn();
    return [performance.now() - started, value];
  };
  const rows: string[][] = [];
  let worst = 0;
  for (const kind of KINDS) {
    const baseline = async () => (await bench.ch.query({ query: kind.baseline, format: 'JSONEachRow' })).json<Record<string, unknown>>();
    await kind.ours(bench);
    await baseline();
    const oursMs: number[] = [];
    const baseMs: number[] = [];
    let lastOurs: number[] = [];
    let lastBase: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const [a, o] = await timed(() => kind.ours(bench));
      const [b, r] = await timed(baseline);
      oursMs.push(a);
      baseMs.push(b);
      lastOurs = o;
      lastBase = kind.numbers(r);
    }
    const same = JSON.stringify(lastOurs) === JSON.stringify(lastBase);
    const ratio = median(oursMs) / median(baseMs);
    worst = Math.max(worst, ratio);
    rows.push([
      kind.name,
      median(oursMs).toFixed(0),
      median(baseMs).toFixed(0),
      ratio.toFixed(2),
      same ? 'yes' : `NO (${JSON.stringify(lastOurs).slice(0, 60)} vs ${JSON.stringify(lastBase).slice(0, 60)})`,
    ]);
  }
  printRatioTable(rows, { runs: RUNS, events: EVENTS, worst });
  await bench.close();
  if (rows.some((r) => !r[4]!.startsWith('yes'))) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
