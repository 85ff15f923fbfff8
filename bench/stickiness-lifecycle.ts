/**
 * Stickiness and lifecycle benchmark: StickinessQuery and LifecycleQuery on /query/ against the
 * shortest hand-written ClickHouse queries giving the same answers, on the trends benchmark's
 * generated events (bench/analytics-data.ts: merged persons resolved through
 * person_distinct_id2), in the same run.
 *
 * - stickiness: each person's distinct days with a $pageview in January 2–31, persons counted by
 *   that number of days.
 * - lifecycle: each person's sorted days with a $pageview from the day before the range to the day
 *   after, each day new (the person's creation day and first), returning (the day before active
 *   too) or resurrecting, the day after each active day without activity dormant; counted per day
 *   and status inside the range.
 *
 *   npm run bench:stickiness-lifecycle   (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5)
 *
 * Prints, per query kind, the median latency of each and the ratio (target ≤ 1.5×), and checks
 * that both answered the same numbers.
 */
import { FROM, PDI, PERSON, startAnalyticsBench, TO, type AnalyticsBench } from './analytics-data';
import { printRatioTable, ratioRow, timeAgainstBaseline } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const RANGE = { date_from: '2024-01-02', date_to: '2024-01-31' };
const SERIES = [{ kind: 'EventsNode', event: '$pageview' }];

interface Kind {
  name: string;
  ours(bench: AnalyticsBench): Promise<string[]>;
  baseline: string;
  /** The baseline's rows as the same numbers. */
  numbers(rows: Record<string, unknown>[]): string[];
}

const KINDS: Kind[] = [
  {
    name: 'stickiness',
    ours: async (b) => {
      const r = await b.post<{ results: { data: number[] }[] }>('/api/environments/1/query/', {
        query: { kind: 'StickinessQuery', series: SERIES, dateRange: RANGE, interval: 'day' },
      });
      return r.results[0]!.data.flatMap((n, i) => (n ? [`${i + 1}:${n}`] : []));
    },
    baseline: `SELECT n, count() AS persons FROM (
        SELECT ${PERSON} AS p, uniqExact(toDate(e.timestamp)) AS n FROM events AS e ${PDI}
        WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO} GROUP BY p)
      GROUP BY n ORDER BY n`,
    numbers: (rows) => rows.map((r) => `${String(r['n'])}:${String(r['persons'])}`),
  },
  {
    name: 'lifecycle',
    ours: async (b) => {
      const r = await b.post<{ results: { status: string; days: string[]; data: number[] }[] }>('/api/environments/1/query/', {
        query: { kind: 'LifecycleQuery', series: SERIES, dateRange: RANGE, interval: 'day' },
      });
      return r.results.flatMap((s) => s.data.flatMap((n, i) => (n ? [`${s.status}:${s.days[i]}:${Math.abs(n)}`] : []))).sort();
    },
    baseline: `SELECT s.2 AS status, toString(s.1) AS day, count() AS persons FROM (
        SELECT arrayConcat(
                 arrayMap((d, i) -> (d, if(i = 1, if(d = c.created, 'new', 'resurrecting'), if(days[i - 1] = d - 1, 'returning', 'resurrecting'))), days, arrayEnumerate(days)),
                 arrayMap(d -> (d + 1, 'dormant'), arrayFilter((d, i) -> days[i + 1] != d + 1, days, arrayEnumerate(days)))) AS statuses
        FROM (SELECT ${PERSON} AS p, arraySort(groupUniqArray(toDate(e.timestamp))) AS days FROM events AS e ${PDI}
              WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp >= toDateTime64('2024-01-01 00:00:00', 6, 'UTC')
                AND e.timestamp < toDateTime64('2024-02-01 00:00:00', 6, 'UTC') GROUP BY p) AS a
        LEFT JOIN (SELECT id, toDate(argMax(created_at, version)) AS created FROM person WHERE team_id = 1 GROUP BY id) AS c ON c.id = a.p)
      ARRAY JOIN statuses AS s
      WHERE s.1 >= toDate('2024-01-02') AND s.1 <= toDate('2024-01-31')
      GROUP BY status, day`,
    numbers: (rows) => rows.map((r) => `${String(r['status'])}:${String(r['day'])}:${String(r['persons'])}`).sort(),
  },
];

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
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
  printRatioTable(rows, { runs: RUNS, events: EVENTS, worst });
  await bench.close();
  if (rows.some((r) => !r[4]!.startsWith('yes'))) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
