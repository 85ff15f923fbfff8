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
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { createApiApp } from '@sightline/api';
import { createAnalyticsStore, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { listen } from '@sightline/http';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { median } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const PERSONS = 5_000;
const MERGED = 1_000;
const PERSONAL_KEY = 'phx_bench_trends_personal_key';
/** The data spans January 2024; "now" is the end of it. */
const NOW = Date.parse('2024-01-31T12:00:00Z');
const FROM = "toDateTime64('2024-01-02 00:00:00', 6, 'UTC')";
const TO = "toDateTime64('2024-01-31 23:59:59.999999', 6, 'UTC')";

async function generate(ch: ClickHouseClient): Promise<void> {
  const started = Date.now();
  // Person n has distinct id user<n> and a UUID built from n; plan and the price depend on n.
  await ch.command({
    query: `INSERT INTO events (uuid, event, properties, timestamp, team_id, distinct_id, created_at, person_id, person_properties)
      SELECT generateUUIDv4(number),
             ['$pageview', '$pageview', '$pageview', 'signup', 'purchase'][number % 5 + 1],
             concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera', 'Brave'][cityHash64(number, 1) % 6 + 1],
                    '","price":', toString(cityHash64(number, 2) % 200),
                    ',"$session_id":"s', toString(intDiv(number, 25)), '"}'),
             toDateTime64('2024-01-01 00:00:00', 6, 'UTC') + toIntervalMillisecond(intDiv(number * 2678400000, ${EVENTS})),
             1,
             concat('user', toString(cityHash64(number, 3) % ${PERSONS})),
             now64(6),
             toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(cityHash64(number, 3) % ${PERSONS}), 12, '0'))),
             concat('{"plan":"', ['free', 'pro', 'enterprise'][cityHash64(number, 3) % ${PERSONS} % 3 + 1], '"}')
      FROM numbers(${EVENTS})`,
  });
  await ch.command({
    query: `INSERT INTO person_distinct_id2 (team_id, distinct_id, person_id, is_deleted, version)
      SELECT 1, concat('user', toString(number)), toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number), 12, '0'))), 0, 0
      FROM numbers(${PERSONS})`,
  });
  // The last MERGED persons' distinct ids now point at another person (a later version).
  await ch.command({
    query: `INSERT INTO person_distinct_id2 (team_id, distinct_id, person_id, is_deleted, version)
      SELECT 1, concat('user', toString(number)), toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number - ${MERGED}), 12, '0'))), 0, 1
      FROM numbers(${PERSONS - MERGED}, ${MERGED})`,
  });
  await ch.command({
    query: `INSERT INTO person (id, created_at, team_id, properties, is_identified, is_deleted, version)
      SELECT toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number), 12, '0'))), now64(3), 1,
             concat('{"plan":"', ['free', 'pro', 'enterprise'][number % 3 + 1], '"}'), 1, 0, 0
      FROM numbers(${PERSONS})`,
  });
  await ch.command({ query: 'OPTIMIZE TABLE events FINAL' });
  console.log(
    `generated ${EVENTS.toLocaleString('en-US')} events for ${PERSONS} persons (${MERGED} merged) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** Distinct ids resolved to their current person, as a user writing the query by hand would. */
const PDI = `LEFT JOIN (SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_id2 WHERE team_id = 1
                     GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0) AS pdi ON pdi.distinct_id = e.distinct_id`;
const PERSON = 'if(empty(pdi.distinct_id), e.person_id, pdi.person_id)';
/** The dynamic cohort "plan is pro" the benchmark creates first (so its id is 1). */
const COHORT_ID = 1;

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
    body: { events: [{ id: 'signup', math: 'dau' }], date_from: '2024-01-02', date_to: '2024-01-31', properties: [{ key: 'id', value: COHORT_ID, type: 'cohort' }] },
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
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-trends-'));
  const db = await createMetadataStore({ dataDir: dir });
  await migratePostgres(db);
  await bootstrapInstance(db, { personalApiKey: PERSONAL_KEY });
  const [cohort] = await db.query<{ id: number }>(
    `INSERT INTO cohorts (team_id, name, filters) VALUES (1, 'Pro', $1) RETURNING id`,
    [JSON.stringify({ properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] }] } })],
  );
  if (cohort!.id !== COHORT_ID) throw new Error(`expected the cohort to get id ${COHORT_ID}, got ${cohort!.id}`);
  const ch = createAnalyticsStore({ dataDir: dir, user: 'default', password: '', database: 'default' });
  await migrateClickHouse(ch);
  await generate(ch);
  const app = createApiApp({
    db,
    ch,
    logger: silentLogger(),
    metrics: createMetrics(),
    now: () => NOW,
    readiness: [],
    isShuttingDown: () => false,
    insightCacheTtlMs: 0,
  });
  const server = await listen(app, { host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${server.port}/api/projects/1/insights/trend/`;

  const ours = async (body: Record<string, unknown>) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...body, refresh: true }),
    });
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    return res.json() as Promise<Parameters<Kind['ours']>[0]>;
  };
  const baseline = async (sql: string) => (await ch.query({ query: sql, format: 'JSONEachRow' })).json<{ k: string; v: number | string }>();
  const timed = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
    const started = performance.now();
    const value = await fn();
    return [performance.now() - started, value];
  };

  const rows: string[][] = [];
  let worst = 0;
  for (const kind of KINDS) {
    const oursMs: number[] = [];
    const baseMs: number[] = [];
    let lastOurs: Parameters<Kind['ours']>[0] | undefined;
    let lastBase: { k: string; v: number | string }[] = [];
    // One warm-up each, then alternate so both see the same machine state.
    await ours(kind.body);
    await baseline(kind.baseline);
    for (let i = 0; i < RUNS; i++) {
      const [a, o] = await timed(() => ours(kind.body));
      const [b, r] = await timed(() => baseline(kind.baseline));
      oursMs.push(a);
      baseMs.push(b);
      lastOurs = o;
      lastBase = r;
    }
    const expected = new Map(lastBase.map((r) => [r.k, Number(r.v)]));
    const got = new Map(kind.ours(lastOurs!));
    const agree = expected.size === got.size && [...expected].every(([k, v]) => Math.abs((got.get(k) ?? NaN) - v) < 1e-6 * Math.max(1, Math.abs(v)));
    const ratio = median(oursMs) / median(baseMs);
    worst = Math.max(worst, ratio);
    rows.push([
      kind.name,
      median(oursMs).toFixed(0),
      median(baseMs).toFixed(0),
      ratio.toFixed(2),
      agree ? 'yes' : `NO (${got.size} vs ${expected.size} values)`,
    ]);
  }
  const header = ['query kind', 'endpoint ms', 'hand-written ms', 'ratio', 'same answer'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\nmedians of ${RUNS} runs, ${EVENTS.toLocaleString('en-US')} events (target: ratio ≤ 1.5 for every kind)\n`);
  console.log(line(header));
  for (const r of rows) console.log(line(r));
  console.log(`\nworst ratio ${worst.toFixed(2)}`);
  await server.close();
  await ch.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
  if (rows.some((r) => !r[4]!.startsWith('yes'))) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
