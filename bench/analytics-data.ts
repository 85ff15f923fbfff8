/**
 * The data the analytics benchmarks share: millions of events generated inside ClickHouse
 * (INSERT … SELECT … FROM numbers(), so set-up takes seconds) for 5,000 persons, of whom 1,000
 * were merged into others after their events were written, and an api app over the embedded
 * stores (chdb, PGlite) serving it.
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
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';

export const PERSONS = 5_000;
export const MERGED = 1_000;
export const PERSONAL_KEY = 'phx_bench_analytics_personal_key';
/** The data spans January 2024; "now" is the end of it. */
export const NOW = Date.parse('2024-01-31T12:00:00Z');
export const FROM = "toDateTime64('2024-01-02 00:00:00', 6, 'UTC')";
export const TO = "toDateTime64('2024-01-31 23:59:59.999999', 6, 'UTC')";
/** Distinct ids resolved to their current person, as a user writing the query by hand would. */
export const PDI = `LEFT JOIN (SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_id2 WHERE team_id = 1
                     GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0) AS pdi ON pdi.distinct_id = e.distinct_id`;
export const PERSON = 'if(empty(pdi.distinct_id), e.person_id, pdi.person_id)';
/** The dynamic cohort "plan is pro" the set-up creates first (so its id is 1). */
export const COHORT_ID = 1;

export interface AnalyticsBench {
  ch: ClickHouseClient;
  db: MetadataStore;
  /** The api app's address (it serves the web app too). */
  base: string;
  /** POSTs a body to an api path and answers the parsed JSON (throws unless 200). */
  post<T>(apiPath: string, body: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

export async function startAnalyticsBench(events: number): Promise<AnalyticsBench> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-analytics-'));
  const db = await createMetadataStore({ dataDir: dir });
  await migratePostgres(db);
  await bootstrapInstance(db, { personalApiKey: PERSONAL_KEY });
  const [cohort] = await db.query<{ id: number }>(`INSERT INTO cohorts (team_id, name, filters) VALUES (1, 'Pro', $1) RETURNING id`, [
    JSON.stringify({ properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] }] } }),
  ]);
  if (cohort!.id !== COHORT_ID) throw new Error(`expected the cohort to get id ${COHORT_ID}, got ${cohort!.id}`);
  const ch = createAnalyticsStore({ dataDir: dir, user: 'default', password: '', database: 'default' });
  await migrateClickHouse(ch);
  await generate(ch, events);
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
  return {
    ch,
    db,
    base: `http://127.0.0.1:${server.port}`,
    async post<T>(apiPath: string, body: Record<string, unknown>) {
      const res = await fetch(`http://127.0.0.1:${server.port}${apiPath}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...body, refresh: true }),
      });
      if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
      return res.json() as Promise<T>;
    },
    async close() {
      await server.close();
      await ch.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function generate(ch: ClickHouseClient, EVENTS: number): Promise<void> {
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
