/**
 * Insights benchmark: each insight kind's endpoint (over HTTP, refresh=true) against the
 * shortest hand-written ClickHouse query giving the same answer, on the analytics benchmarks'
 * generated events (bench/analytics-data.ts), in one run. Each kind keeps its queries in its own
 * `insights-<kind>.ts`, listed below.
 *
 *   npm run bench:insights          (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5;
 *                                    BENCH_KINDS=retention,paths for some kinds only)
 *
 * Prints, per query, the median latency of each and the ratio (target ≤ 1.5×), and checks that
 * both answered the same numbers.
 */
import { startAnalyticsBench } from './analytics-data';
import { printRatioTable, ratioRow, timeAgainstBaseline } from './bench-process';
import type { InsightBenchKind } from './insights-kind';
import { PATHS_KINDS } from './insights-paths';
import { RETENTION_KINDS } from './insights-retention';
import { STICKINESS_LIFECYCLE_KINDS } from './insights-stickiness-lifecycle';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const ALL_KINDS: InsightBenchKind[] = [...RETENTION_KINDS, ...STICKINESS_LIFECYCLE_KINDS, ...PATHS_KINDS];
/** BENCH_KINDS=paths,stickiness runs only the queries whose name starts with one of these. */
const ONLY = process.env['BENCH_KINDS']?.split(',').filter(Boolean);
const KINDS = ONLY ? ALL_KINDS.filter((k) => ONLY.some((prefix) => k.name.startsWith(prefix))) : ALL_KINDS;

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
  const rows: string[][] = [];
  let worst = 0;
  for (const kind of KINDS) {
    const baseline = async () => (await bench.ch.query({ query: kind.baseline, format: 'JSONEachRow' })).json<Record<string, unknown>>();
    const timed = await timeAgainstBaseline(RUNS, () => kind.ours(bench), baseline);
    const [ours, base] = [timed.lastOurs, kind.numbers(timed.lastBase)];
    const same = JSON.stringify(ours) === JSON.stringify(base);
    const { row, ratio } = ratioRow(kind.name, timed, same ? 'yes' : `NO (${JSON.stringify(ours).slice(0, 60)} vs ${JSON.stringify(base).slice(0, 60)})`);
    worst = Math.max(worst, ratio);
    rows.push(row);
  }
  printRatioTable(rows, { runs: RUNS, events: EVENTS, worst });
  await bench.close();
  if (rows.some((r) => !r[4]!.startsWith('yes'))) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
