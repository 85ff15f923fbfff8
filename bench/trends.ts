/**
 * Trends benchmark: our endpoint (POST /api/projects/1/insights/trend/ over HTTP, refresh=true so
 * nothing comes from the cache) against a hand-written minimal ClickHouse query giving the same
 * answer, on the same embedded engine (chdb) in the same run. 10 million events are generated
 * inside ClickHouse (INSERT … SELECT … FROM numbers()), for 5,000 persons of which 1,000 were
 * merged into others after their events were written (so person counts must resolve distinct
 * ids through person_distinct_id2, as the hand-written queries do too).
 *
 *   npm run bench:trends          (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5)
 *
 * Prints, per query kind, the median latency of each and the ratio (target ≤ 1.5×), and checks
 * that both answered the same numbers.
 */
import { COHORT_ID, FROM, PDI, PERSON, startAnalyticsBench, TO } from './analytics-data';
import { printRatioTable, ratioRow, timeAgainstBaseline } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);

interface Kind {
  name: string;
  body: Record<string, unknown>;
  /** The minimal query; rows [key, value] (key '' for a single series). */
  baseline: string;
  /** Our answer as [key, value] rows, to check both agree. */
  ours(result: { result: { data: number[]; days: string[]; breakdown_value?: unknown; label: string; compare_label?: string }[] }): [string, number][];
}

const byDay = (r: Parameters<Kind['ours']>[0]) =>
  r.result.flatMap((s) =>
    s.data.map((v, i) => [`${s.compare_label ?? ''}${s.breakdown_value ?? ''}|${s.days[i]}`, v] as [string, number]).filter(([, v]) => v !== 0),
  );

const KINDS: Kind[] = [
  {
    name: 'daily total',
    body: { events: [{ id: '$pageview' }], date_from: '2024-01-02', date_to: '2024-01-31' },
    baseline: `SELECT concat('|', toString(toDate(timestamp))) AS k, count() AS v FROM events WHERE team_id = 1 AND event = '$pageview' AND timestamp >= ${FROM} AND timestamp <= ${TO} GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'dau',
    body: { events: [{ id: '$pageview', math: 'dau' }], date_from: '2024-01-02', date_to: '2024-01-31' },
    baseline: `SELECT concat('|', toString(toDate(e.timestamp))) AS k, uniqExact(${PERSON}) AS v FROM events AS e ${PDI}
               WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO} GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'weekly active',
    body: { events: [{ id: '$pageview', math: 'weekly_active' }], date_from: '2024-01-20', date_to: '2024-01-31' },
    baseline: `SELECT concat('|', toString(d)) AS k, uniqExact(p) AS v FROM (
                 SELECT ${PERSON} AS p, toDate(e.timestamp) AS day FROM events AS e ${PDI}
                 WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp >= toDateTime64('2024-01-14 00:00:00', 6, 'UTC') AND e.timestamp <= ${TO}
                 GROUP BY p, day)
               ARRAY JOIN arrayFilter(x -> x >= toDate('2024-01-20') AND x <= toDate('2024-01-31'), arrayMap(i -> day + i, range(7))) AS d
               GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'event-property breakdown',
    body: { events: [{ id: '$pageview' }], date_from: '2024-01-02', date_to: '2024-01-31', breakdown: '$browser' },
    baseline: `SELECT concat(JSONExtractString(properties, '$browser'), '|', toString(toDate(timestamp))) AS k, count() AS v FROM events
               WHERE team_id = 1 AND event = '$pageview' AND timestamp >= ${FROM} AND timestamp <= ${TO} GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'person-property breakdown',
    body: { events: [{ id: '$pageview', math: 'dau' }], date_from: '2024-01-02', date_to: '2024-01-31', breakdown: 'plan', breakdown_type: 'person' },
    baseline: `SELECT concat(JSONExtractString(e.person_properties, 'plan'), '|', toString(toDate(e.timestamp))) AS k, uniqExact(${PERSON}) AS v FROM events AS e ${PDI}
               WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO} GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'person-property filter',
    body: {
      events: [{ id: 'signup' }],
      date_from: '2024-01-02',
      date_to: '2024-01-31',
      properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }],
    },
    baseline: `SELECT concat('|', toString(toDate(timestamp))) AS k, count() AS v FROM events
               WHERE team_id = 1 AND event = 'signup' AND timestamp >= ${FROM} AND timestamp <= ${TO} AND JSONExtractString(person_properties, 'plan') = 'pro' GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'cohort filter',
    body: {
      events: [{ id: 'signup', math: 'dau' }],
      date_from: '2024-01-02',
      date_to: '2024-01-31',
      properties: [{ key: 'id', value: COHORT_ID, type: 'cohort' }],
    },
    baseline: `SELECT concat('|', toString(toDate(e.timestamp))) AS k, uniqExact(${PERSON}) AS v FROM events AS e ${PDI}
               WHERE e.team_id = 1 AND e.event = 'signup' AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO}
                 AND ${PERSON} IN (SELECT id FROM person WHERE team_id = 1 GROUP BY id
                                   HAVING argMax(is_deleted, version) = 0 AND JSONExtractString(argMax(properties, version), 'plan') = 'pro')
               GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'compare',
    body: { events: [{ id: '$pageview' }], date_from: '2024-01-17', date_to: '2024-01-31', compare: true },
    baseline: `SELECT concat(if(timestamp >= toDateTime64('2024-01-17 00:00:00', 6, 'UTC'), 'current', 'previous'), '|', toString(toDate(timestamp))) AS k, count() AS v FROM events
               WHERE team_id = 1 AND event = '$pageview' AND timestamp >= toDateTime64('2024-01-02 00:00:00', 6, 'UTC') AND timestamp <= ${TO} GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'formula',
    body: { events: [{ id: '$pageview' }, { id: 'signup' }], date_from: '2024-01-02', date_to: '2024-01-31', formula: 'A/B' },
    baseline: `SELECT concat('|', toString(toDate(timestamp))) AS k, countIf(event = '$pageview') / countIf(event = 'signup') AS v FROM events
               WHERE team_id = 1 AND event IN ('$pageview', 'signup') AND timestamp >= ${FROM} AND timestamp <= ${TO} GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'sum of a property',
    body: { events: [{ id: 'purchase', math: 'sum', math_property: 'price' }], date_from: '2024-01-02', date_to: '2024-01-31' },
    baseline: `SELECT concat('|', toString(toDate(timestamp))) AS k, sum(JSONExtractFloat(properties, 'price')) AS v FROM events
               WHERE team_id = 1 AND event = 'purchase' AND timestamp >= ${FROM} AND timestamp <= ${TO} GROUP BY k`,
    ours: byDay,
  },
  {
    name: 'hourly over 2 days',
    body: { events: [{ id: '$pageview' }], interval: 'hour', date_from: '2024-01-29T12:00:00', date_to: '2024-01-31T11:59:59', explicit_date: true },
    baseline: `SELECT concat('|', formatDateTime(toStartOfHour(timestamp), '%Y-%m-%d %H:%i:%S')) AS k, count() AS v FROM events
               WHERE team_id = 1 AND event = '$pageview' AND timestamp >= toDateTime64('2024-01-29 12:00:00', 6, 'UTC') AND timestamp <= toDateTime64('2024-01-31 11:59:59', 6, 'UTC') GROUP BY k`,
    ours: byDay,
  },
];

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
  const { ch } = bench;
  const ours = (body: Record<string, unknown>) => bench.post<Parameters<Kind['ours']>[0]>('/api/projects/1/insights/trend/', body);
  const baseline = async (sql: string) => (await ch.query({ query: sql, format: 'JSONEachRow' })).json<{ k: string; v: number | string }>();
  const rows: string[][] = [];
  let worst = 0;
  for (const kind of KINDS) {
    const { oursMs, baseMs, lastOurs, lastBase } = await timeAgainstBaseline(
      RUNS,
      () => ours(kind.body),
      () => baseline(kind.baseline),
    );
    const expected = new Map(lastBase.map((r) => [r.k, Number(r.v)]));
    const got = new Map(kind.ours(lastOurs));
    const agree = expected.size === got.size && [...expected].every(([k, v]) => Math.abs((got.get(k) ?? NaN) - v) < 1e-6 * Math.max(1, Math.abs(v)));
    const { row, ratio } = ratioRow(kind.name, { oursMs, baseMs }, agree ? 'yes' : `NO (${got.size} vs ${expected.size} values)`);
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
