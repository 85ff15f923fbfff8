/**
 * HogQL query benchmark: ten representative HogQL queries through POST /api/projects/1/query/
 * (refresh, so nothing comes from the cache) against the hand-written ClickHouse SQL giving the
 * same answer, on the same embedded engine and data as bench:trends (analytics-data.ts: 10
 * million events, 5,000 persons of which 1,000 merged). Also times the compiler alone (AST to
 * SQL, the parse in its worker excluded; target: median under 5 ms).
 *
 *   npm run bench:sql          (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 5)
 *
 * Redelivery: Sightline's rule is that a redelivered event (the same uuid, as a batch retried
 * after a lost answer writes it again) is never counted twice, so HogQL reads events with FINAL
 * as trends do. The bench data holds such events: after the set-up, 0.1 % of the events (those
 * of one 45-minute stretch, as a batch holds events that arrived together) are inserted again
 * in a later insert, as a retried batch would, and merges are stopped so they stay unmerged (as
 * they are between an insert and ClickHouse's next merge). The hand-written
 * SQL that gives the same answer must then read FINAL too: that is the baseline of the ratio.
 *
 * Prints per query its first parse (the parser's worker; a text run again is not parsed again:
 * libs/hogql keeps parsed trees) and compile median, the endpoint's run median, the hand-written (FINAL) median
 * and their ratio (target ≤ 1.2), the ratio of the CPU time the process spent on each (the
 * engine runs in it: a figure the machine's other load moves far less), whether both answered the same rows, and a third column: the
 * hand-written SQL without FINAL, with its own answer check. It counts the redelivered events
 * again, so its answer differs where a count or sum meets one: the visible cost of the rule.
 *
 * Transport: the endpoint is timed as its client sees it, an HTTP request whose JSON answer is
 * decoded, while the embedded engine answers the hand-written SQL in-process with no transport
 * at all, which no client of a ClickHouse server has. So the hand-written SQL is also timed as
 * a client of ClickHouse's HTTP interface sees it: POSTed with the same client (fetch) to a
 * stand-in of that interface (a bare HTTP server passing the SQL to the same engine and its
 * JSONCompactEachRow text back as it is), the lines decoded as @clickhouse/client decodes them.
 * Both ratios are printed; the stand-in's HTTP server is Node's, which costs more than
 * ClickHouse's own, so the HTTP ratio leans, if anything, in the hand-written SQL's favour.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileSelect, createHogQLCompiler } from '@sightline/hogql';
import { FROM, PDI, PERSON, startAnalyticsBench, TO, type AnalyticsBench } from './analytics-data';
import { median } from './bench-process';

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
  /** The same answer written by hand (rows in the same order), reading events with FINAL. */
  baseline: string;
}

const QUERIES: Query[] = [
  {
    name: 'count by event',
    hogql: 'SELECT event, count() FROM events GROUP BY event ORDER BY event',
    baseline: 'SELECT event, count() FROM events FINAL WHERE team_id = 1 GROUP BY event ORDER BY event',
  },
  {
    name: 'daily pageviews',
    hogql: `SELECT toDate(timestamp) AS d, count() FROM events WHERE event = '$pageview' AND ${JAN} GROUP BY d ORDER BY d`,
    baseline: `SELECT toDate(timestamp) AS d, count() FROM events FINAL WHERE team_id = 1 AND event = '$pageview' AND ${JAN_SQL} GROUP BY d ORDER BY d`,
  },
  {
    name: 'daily unique persons',
    hogql: `SELECT toDate(timestamp) AS d, count(DISTINCT person_id) FROM events WHERE event = '$pageview' AND ${JAN} GROUP BY d ORDER BY d`,
    baseline: `SELECT toDate(e.timestamp) AS d, uniqExact(${PERSON}) FROM events AS e FINAL ${PDI} WHERE e.team_id = 1 AND e.event = '$pageview' AND ${E_JAN_SQL} GROUP BY d ORDER BY d`,
  },
  {
    name: 'event-property breakdown',
    hogql: `SELECT properties.$browser AS b, count() FROM events WHERE event = '$pageview' GROUP BY b ORDER BY b`,
    baseline: `SELECT JSONExtractString(properties, '$browser') AS b, count() FROM events FINAL WHERE team_id = 1 AND event = '$pageview' GROUP BY b ORDER BY b`,
  },
  {
    name: 'person-property breakdown',
    hogql: `SELECT person.properties.plan AS p, count(DISTINCT person_id) FROM events WHERE event = 'signup' GROUP BY p ORDER BY p`,
    baseline: `SELECT JSONExtractString(e.person_properties, 'plan') AS p, uniqExact(${PERSON}) FROM events AS e FINAL ${PDI} WHERE e.team_id = 1 AND e.event = 'signup' GROUP BY p ORDER BY p`,
  },
  {
    name: 'sum of a property',
    hogql: `SELECT sum(toFloat(properties.price)) FROM events WHERE event = 'purchase'`,
    baseline: `SELECT sum(JSONExtractFloat(properties, 'price')) FROM events FINAL WHERE team_id = 1 AND event = 'purchase'`,
  },
  {
    name: 'join persons',
    hogql: `SELECT p.properties.plan AS plan, count() FROM events e JOIN persons p ON p.id = e.person_id WHERE e.event = 'signup' GROUP BY plan ORDER BY plan`,
    baseline: `SELECT JSONExtractString(p.properties, 'plan') AS plan, count() FROM events AS e FINAL ${PDI}
               JOIN (SELECT id, argMax(properties, version) AS properties FROM person WHERE team_id = 1 GROUP BY id HAVING argMax(is_deleted, version) = 0) AS p
                 ON p.id = ${PERSON}
               WHERE e.team_id = 1 AND e.event = 'signup' GROUP BY plan ORDER BY plan`,
  },
  {
    name: 'CTE: events per user',
    hogql: 'WITH c AS (SELECT distinct_id, count() AS n FROM events GROUP BY distinct_id) SELECT n, count() FROM c GROUP BY n ORDER BY n LIMIT 10000',
    baseline: 'SELECT n, count() FROM (SELECT distinct_id, count() AS n FROM events FINAL WHERE team_id = 1 GROUP BY distinct_id) GROUP BY n ORDER BY n',
  },
  {
    name: 'IN (SELECT …) of persons',
    hogql: `SELECT count() FROM events WHERE event = 'purchase' AND person_id IN (SELECT id FROM persons WHERE properties.plan = 'pro')`,
    baseline: `SELECT count() FROM events AS e FINAL ${PDI} WHERE e.team_id = 1 AND e.event = 'purchase'
               AND ${PERSON} IN (SELECT id FROM person WHERE team_id = 1 GROUP BY id
                                 HAVING argMax(is_deleted, version) = 0 AND JSONExtractString(argMax(properties, version), 'plan') = 'pro')`,
  },
  {
    name: 'window: running total',
    hogql: `SELECT d, n, sum(n) OVER (ORDER BY d) FROM (SELECT toDate(timestamp) AS d, count() AS n FROM events WHERE event = 'signup' GROUP BY d) ORDER BY d`,
    baseline: `SELECT d, n, sum(n) OVER (ORDER BY d) FROM (SELECT toDate(timestamp) AS d, count() AS n FROM events FINAL WHERE team_id = 1 AND event = 'signup' GROUP BY d) ORDER BY d`,
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
  const parseMs = new Map<string, number>();
  for (const query of QUERIES) {
    // The parse a text's first run pays (in the worker); the compiler keeps the tree for the next.
    const parseStarted = performance.now();
    const ast = await compiler.parseSelect(query.hogql);
    parseMs.set(query.name, performance.now() - parseStarted);
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
  const redelivered = await redeliver(ch);
  console.log(`redelivered ${redelivered.toLocaleString('en-US')} events (inserted again in a later insert, left unmerged)`);
  const select = async (sql: string) => (await ch.query({ query: sql, format: 'JSONCompactEachRow' })).json<unknown[]>();
  const overHttp = await startClickHouseHttpStandIn(ch);
  await printFixedCost(
    () => bench.post('/api/projects/1/query/', { query: { kind: 'HogQLQuery', query: 'SELECT 1' } }),
    () => select('SELECT 1'),
    () => overHttp.select('SELECT 1'),
  );
  const rows: string[][] = [];
  let worst = 0;
  let worstOverHttp = 0;
  let differ = false;
  for (const query of QUERIES) {
    const withoutFinal = query.baseline.replaceAll(' FINAL', '');
    // One warm-up each, then rounds that alternate the three, so each sees the same machine state.
    const sides = [
      () => bench.post<{ results: unknown[][] }>('/api/projects/1/query/', { query: { kind: 'HogQLQuery', query: query.hogql } }).then((r) => r.results),
      () => select(query.baseline),
      () => select(withoutFinal),
      () => overHttp.select(query.baseline),
    ];
    const last: unknown[][][] = [];
    for (const side of sides) last.push(await side());
    const times: number[][] = [[], [], [], []];
    const cpu: number[][] = [[], [], [], []];
    for (let i = 0; i < RUNS; i++) {
      for (const [k, side] of sides.entries()) {
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        last[k] = await side();
        const used = process.cpuUsage(cpuBefore);
        times[k]!.push(performance.now() - started);
        cpu[k]!.push((used.user + used.system) / 1000);
      }
    }
    const [ours, base, bare, baseHttp] = times.map(median) as [number, number, number, number];
    const cpuRatio = median(cpu[0]!) / median(cpu[1]!);
    const agree = normalise(last[0]!) === normalise(last[1]!);
    differ ||= !agree || normalise(last[3]!) !== normalise(last[1]!);
    const ratio = ours / base;
    worst = Math.max(worst, ratio);
    worstOverHttp = Math.max(worstOverHttp, ours / baseHttp);
    rows.push([
      `${query.name} (parse ${parseMs.get(query.name)!.toFixed(0)} ms, compile ${compileMs.get(query.name)!.toFixed(2)} ms)`,
      ours.toFixed(0),
      base.toFixed(0),
      ratio.toFixed(2),
      cpuRatio.toFixed(2),
      agree ? 'yes' : 'NO',
      baseHttp.toFixed(0),
      (ours / baseHttp).toFixed(2),
      (median(cpu[0]!) / median(cpu[3]!)).toFixed(2),
      bare.toFixed(0),
      (ours / bare).toFixed(2),
      normalise(last[2]!) === normalise(last[1]!) ? 'yes' : 'no',
    ]);
  }
  const header = [
    'query',
    'endpoint ms',
    'by hand FINAL ms',
    'ratio',
    'cpu ratio',
    'same answer',
    'by hand FINAL over HTTP ms',
    'ratio',
    'cpu ratio',
    'by hand, no FINAL ms',
    'ratio',
    'same answer',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(
    `\nmedians of ${RUNS} runs, ${EVENTS.toLocaleString('en-US')} events (target: ratio ≤ 1.2 against the hand-written SQL with FINAL, for every query; first in-process, then both sides over HTTP)\n`,
  );
  console.log(line(header));
  for (const r of rows) console.log(line(r));
  const verdict = (ratio: number) => `${ratio.toFixed(3)} (${ratio <= 1.2 ? 'met' : 'missed'})`;
  console.log(`\nworst ratio in-process ${verdict(worst)}, over HTTP ${verdict(worstOverHttp)}; target ≤ 1.2`);
  console.log('(without FINAL a redelivered event counts twice: that answer is not the same where a count or sum meets one)');
  const compileMedian = median(compileRows);
  console.log(`compile (AST → SQL) median over the ten queries: ${compileMedian.toFixed(2)} ms (target < 5 ms)`);
  await overHttp.close();
  await bench.close();
  if (differ || compileMedian >= 5) process.exitCode = 1;
}

/**
 * What every query through the endpoint pays whatever it asks: `SELECT 1` through it (HTTP, the
 * key's authentication and the project's lookup in the metadata store, the parse once, the
 * compile, the limits, the answer) against `SELECT 1` on the engine, wall and CPU medians.
 */
async function printFixedCost(endpoint: () => Promise<unknown>, engine: () => Promise<unknown>, engineOverHttp: () => Promise<unknown>): Promise<void> {
  const measure = async (fn: () => Promise<unknown>) => {
    await fn();
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      await fn();
      const used = process.cpuUsage(cpuBefore);
      wall.push(performance.now() - started);
      cpu.push((used.user + used.system) / 1000);
    }
    return `${median(wall).toFixed(1)} ms (CPU ${median(cpu).toFixed(1)} ms)`;
  };
  console.log(
    `SELECT 1 through the endpoint ${await measure(endpoint)}, on the engine ${await measure(engine)}, on the engine over HTTP ${await measure(engineOverHttp)}: the endpoint's fixed cost`,
  );
}

/**
 * A stand-in of ClickHouse's HTTP interface over the bench's engine: POST the SQL, get the
 * JSONCompactEachRow text as the engine made it (no decoding on the server, as ClickHouse sends
 * its output). `select` is its client: the same fetch the endpoint's side uses, each line decoded
 * as @clickhouse/client's ResultSet.json() decodes JSONCompactEachRow.
 */
async function startClickHouseHttpStandIn(ch: AnalyticsBench['ch']): Promise<{ select(sql: string): Promise<unknown[][]>; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      ch.query({ query: Buffer.concat(parts).toString('utf8'), format: 'JSONCompactEachRow' })
        .then((result) => result.text())
        .then(
          (text) => res.writeHead(200, { 'Content-Type': 'application/x-ndjson' }).end(text),
          (error: unknown) => res.writeHead(500).end(String(error)),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    async select(sql) {
      const res = await fetch(url, { method: 'POST', body: sql });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${res.status} ${text}`);
      return text.split('\n').flatMap((line) => (line ? [JSON.parse(line) as unknown[]] : []));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A retried batch: the events of one 45-minute stretch in mid-January (0.1 % of the month, as a
 * batch holds events that arrived together) written again, as the same rows, in a later insert.
 * Merges of events are stopped first, so the copies stay in their own part as they are until
 * ClickHouse's next merge; answers the number of copies.
 */
async function redeliver(ch: AnalyticsBench['ch']): Promise<number> {
  await ch.command({ query: 'SYSTEM STOP MERGES events' });
  const retried = "team_id = 1 AND timestamp >= toDateTime64('2024-01-15 12:00:00', 6, 'UTC') AND timestamp < toDateTime64('2024-01-15 12:44:38', 6, 'UTC')";
  await ch.command({ query: `INSERT INTO events SELECT * FROM events WHERE ${retried}` });
  const [[count]] = await (await ch.query({ query: `SELECT count() FROM events WHERE ${retried}`, format: 'JSONCompactEachRow' })).json<[number]>();
  return Number(count) / 2;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
