/**
 * Paths benchmark: our insights/path/ endpoint against the shortest hand-written ClickHouse query
 * giving the same edges, on the trends benchmark's generated events (bench/analytics-data.ts: page
 * views without a URL, sign-ups and purchases by 5,000 persons, 1,000 of them merged), in the same
 * run. Both read every event of the range as its path item (a page view's URL less one trailing
 * slash, else the event name), cut each person's items into sessions at 30-minute gaps, collapse
 * repeats (an empty last item goes too: PostHog compares the last item with an empty one), keep
 * the first 5 steps and count the edges between steps.
 *
 *   npm run bench:paths          (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5)
 *
 * Prints the median latency of each and the ratio (target ≤ 1.5×), and checks that both answered
 * the same edges.
 */
import { FROM, PDI, PERSON, startAnalyticsBench, TO } from './analytics-data';
import { printRatioTable, ratioRow, timeAgainstBaseline } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const STEPS = 5;
const PATHS = { insight: 'PATHS', include_event_types: ['$pageview', 'custom_event'], date_from: '2024-01-02', date_to: '2024-01-31', step_limit: STEPS };

/** The hand-written query: per person the sorted items, split at gaps, repeats dropped, the first steps paired. */
const BASELINE = `SELECT concat(toString(i - 1), '_', path[i - 1]) AS source, concat(toString(i), '_', path[i]) AS target,
    count() AS value, avg(times[i] - times[i - 1]) AS seconds
  FROM (
    SELECT arraySlice(arrayFilter((x, next) -> x.2 != next, s, arrayPushBack(arrayMap(x -> x.2, arrayPopFront(s)), '')), 1, ${STEPS}) AS kept,
      arrayMap(x -> x.2, kept) AS path, arrayMap(x -> x.1, kept) AS times
    FROM (
      SELECT arraySort(groupArray((toFloat64(toUnixTimestamp64Micro(e.timestamp)) / 1e6,
          if(e.event = '$pageview', replaceRegexpAll(JSONExtractString(e.properties, '$current_url'), '(.)/$', '\\\\1'), e.event)))) AS evs
      FROM events AS e ${PDI}
      WHERE e.team_id = 1 AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO} AND (e.event = '$pageview' OR NOT startsWith(e.event, '$'))
      GROUP BY ${PERSON}
    )
    ARRAY JOIN arraySplit((x, gap) -> gap >= 1800, evs, arrayDifference(arrayMap(x -> x.1, evs))) AS s
  )
  ARRAY JOIN arrayEnumerate(path) AS i
  WHERE i > 1
  GROUP BY source, target
  ORDER BY value DESC, source, target
  LIMIT 50`;

type Edge = [source: string, target: string, value: number, ms: number];

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
  const ours = async (): Promise<Edge[]> =>
    (
      await bench.post<{ result: { source: string; target: string; value: number; average_conversion_time: number }[] }>(
        '/api/projects/1/insights/path/',
        PATHS,
      )
    ).result.map((e) => [e.source, e.target, e.value, Math.round(e.average_conversion_time)]);
  const baseline = async () => (await bench.ch.query({ query: BASELINE, format: 'JSONEachRow' })).json<Record<string, unknown>>();
  const timed = await timeAgainstBaseline(RUNS, ours, baseline);
  const base: Edge[] = timed.lastBase.map((r) => [String(r['source']), String(r['target']), Number(r['value']), Math.round(Number(r['seconds']) * 1000)]);
  const same = JSON.stringify(timed.lastOurs) === JSON.stringify(base);
  const { row, ratio } = ratioRow(
    `paths (${timed.lastOurs.length} edges)`,
    timed,
    same ? 'yes' : `NO (${JSON.stringify(timed.lastOurs).slice(0, 80)} vs ${JSON.stringify(base).slice(0, 80)})`,
  );
  printRatioTable([row], { runs: RUNS, events: EVENTS, worst: ratio });
  await bench.close();
  if (!same) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
