/**
 * HogQL query benchmark: ten representative HogQL queries through POST /api/projects/1/query/
 * (refresh, so nothing comes from the cache) against the hand-written ClickHouse SQL giving the
 * same answer, on the same embedded engine and data as bench:trends (analytics-data.ts: 10
 * million events, 5,000 persons of which 1,000 merged). Also times the compiler alone (AST to
 * SQL, the parse in its worker excluded; target: median under 5 ms).
 *
 *   npm run bench:sql          (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5)
 *
 * Prints per query the compile median, both run medians and their ratio (target ≤ 1.2), and
 * checks that both answered the same rows.
 */
import { compileSelect, createHogQLCompiler } from '@sightline/hogql';
import { FROM, PDI, PERSON, startAnalyticsBench, TO } from './analytics-data';
import { median, printRatioTable, ratioRow, timeAgainstBaseline } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const COMPILE_RUNS = 200;

// Through the end of the 31st (TO is its last microsecond): at 10M events some fall in its last second.
const JAN = "timestamp >= toDateTime('2024-01-02 00:00:00') AND timestamp < toDateTime('2024-02-01 00:00:00')";
const JAN_SQL = `timestamp >= ${FROM} AND timestamp <= ${TO}`;
const E_JAN_SQL = `e.timestamp >= ${FROM} AND e.timestamp <= ${TO}`;

interface Query {
  name: string;
  hogql: string;
  /** The same answer written by hand (rows in the same order). */
  baseline: string;
}

const QUERIES: Query[] = [
  {
    name: 'count by event',
    hogql: 'SELECT event, count() FROM events GROUP BY event ORDER BY event',
    baseline: 'SELECT event, count() FROM events WHERE team_id = 1 GROUP BY event ORDER BY event',
  },
  {
    name: 'daily pageviews',
    hogql: `SELECT toDate(timestamp) AS d, count() FROM events WHERE event = '$pageview' AND ${JAN} GROUP BY d ORDER BY d`,
    baseline: `SELECT toDate(timestamp) AS d, count() FROM events WHERE team_id = 1 AND event = '$pageview' AND ${JAN_SQL} GROUP BY d ORDER BY d`,
  },
  {
    name: 'daily unique persons',
    hogql: `SELECT toDate(timestamp) AS d, count(DISTINCT person_id) FROM events WHERE event = '$pageview' AND ${JAN} GROUP BY d ORDER BY d`,
    baseline: `SELECT toDate(e.timestamp) AS d, uniqExact(${PERSON}) FROM events AS e ${PDI} WHERE e.team_id = 1 AND e.event = '$pageview' AND ${E_JAN_SQL} GROUP BY d ORDER BY d`,
  },
  {
    name: 'event-property breakdown',
    hogql: `SELECT properties.$browser AS b, count() FROM events WHERE event = '$pageview' GROUP BY b ORDER BY b`,
    baseline: `SELECT JSONExtractString(properties, '$browser') AS b, count() FROM events WHERE team_id = 1 AND event = '$pageview' GROUP BY b ORDER BY b`,
  },
  {
    name: 'person-property breakdown',
    hogql: `SELECT person.properties.plan AS p, count(DISTINCT person_id) FROM events WHERE event = 'signup' GROUP BY p ORDER BY p`,
    baseline: `SELECT JSONExtractString(e.person_properties, 'plan') AS p, uniqExact(${PERSON}) FROM events AS e ${PDI} WHERE e.team_id = 1 AND e.event = 'signup' GROUP BY p ORDER BY p`,
  },
  {
    name: 'sum of a property',
    hogql: `SELECT sum(toFloat(properties.price)) FROM events WHERE event = 'purchase'`,
    baseline: `SELECT sum(JSONExtractFloat(properties, 'price')) FROM events WHERE team_id = 1 AND event = 'purchase'`,
  },
  {
    name: 'join persons',
    hogql: `SELECT p.properties.plan AS plan, count() FROM events e JOIN persons p ON p.id = e.person_id WHERE e.event = 'signup' GROUP BY plan ORDER BY plan`,
    baseline: `SELECT JSONExtractString(p.properties, 'plan') AS plan, count() FROM events AS e ${PDI}
               JOIN (SELECT id, argMax(properties, version) AS properties FROM person WHERE team_id = 1 GROUP BY id HAVING argMax(is_deleted, version) = 0) AS p
                 ON p.id = ${PERSON}
               WHERE e.team_id = 1 AND e.event = 'signup' GROUP BY plan ORDER BY plan`,
  },
  {
    name: 'CTE: events per user',
    hogql: 'WITH c AS (SELECT distinct_id, count() AS n FROM events GROUP BY distinct_id) SELECT n, count() FROM c GROUP BY n ORDER BY n LIMIT 10000',
    baseline: 'SELECT n, count() FROM (SELECT distinct_id, count() AS n FROM events WHERE team_id = 1 GROUP BY distinct_id) GROUP BY n ORDER BY n',
  },
  {
    name: 'IN (SELECT …) of persons',
    hogql: `SELECT count() FROM events WHERE event = 'purchase' AND person_id IN (SELECT id FROM persons WHERE properties.plan = 'pro')`,
    baseline: `SELECT count() FROM events AS e ${PDI} WHERE e.team_id = 1 AND e.event = 'purchase'
               AND ${PERSON} IN (SELECT id FROM person WHERE team_id = 1 GROUP BY id
                                 HAVING argMax(is_deleted, version) = 0 AND JSONExtractString(argMax(properties, version), 'plan') = 'pro')`,
  },
  {
    name: 'window: running total',
    hogql: `SELECT d, n, sum(n) OVER (ORDER BY d) FROM (SELECT toDate(timestamp) AS d, count() AS n FROM events WHERE event = 'signup' GROUP BY d) ORDER BY d`,
    baseline: `SELECT d, n, sum(n) OVER (ORDER BY d) FROM (SELECT toDate(timestamp) AS d, count() AS n FROM events WHERE team_id = 1 AND event = 'signup' GROUP BY d) ORDER BY d`,
  },
];

/** Rows as comparable text: numbers rounded, so float sums compare. */
const normalise = (rows: unknown[][]) =>
  JSON.stringify(
    rows.map((row) =>
      row.map((v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : Number.isFinite(Number(v)) && v !== '' ? Number(Number(v).toPrecision(12)) : v)),
    ),
  );

async function main(): Promise<void> {
  const compiler = await createHogQLCompiler();
  const compileRows: number[] = [];
  const compileMs = new Map<string, number>();
  for (const query of QUERIES) {
    const ast = await compiler.parseSelect(query.hogql);
    const times: number[] = [];
    for (let i = 0; i < COMPILE_RUNS; i++) {
      const started = performance.now();
      compileSelect(ast, { teamId: 1, text: query.hogql, limits: { default: 100, max: 50_000 } });
      times.push(performance.now() - started);
    }
    compileMs.set(query.name, median(times));
    compileRows.push(median(times));
  }
  await compiler.close();

  const bench = await startAnalyticsBench(EVENTS);
  const { ch } = bench;
  const rows: string[][] = [];
  let worst = 0;
  for (const query of QUERIES) {
    const { oursMs, baseMs, lastOurs, lastBase } = await timeAgainstBaseline(
      RUNS,
      () => bench.post<{ results: unknown[][] }>('/api/projects/1/query/', { query: { kind: 'HogQLQuery', query: query.hogql } }),
      async () => (await ch.query({ query: query.baseline, format: 'JSONCompactEachRow' })).json<unknown[]>(),
    );
    const agree = normalise(lastOurs.results) === normalise(lastBase);
    const { row, ratio } = ratioRow(`${query.name} (compile ${compileMs.get(query.name)!.toFixed(2)} ms)`, { oursMs, baseMs }, agree ? 'yes' : 'NO');
    worst = Math.max(worst, ratio);
    rows.push(row);
  }
  printRatioTable(rows, { runs: RUNS, events: EVENTS, worst, target: 1.2 });
  const compileMedian = median(compileRows);
  console.log(`compile (AST → SQL) median over the ten queries: ${compileMedian.toFixed(2)} ms (target < 5 ms)`);
  await bench.close();
  if (rows.some((r) => !r[4]!.startsWith('yes')) || compileMedian >= 5) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
