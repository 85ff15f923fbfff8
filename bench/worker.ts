/**
 * Worker throughput, end to end from the bus into ClickHouse, against the raw ClickHouse
 * insert rate of the same rows and (with persons) the raw PostgreSQL write of the same person
 * rows, both measured in the same run; each run prints its ratios, the summary their medians.
 *
 *   npm run bench:worker                      (defaults below)
 *   BENCH_EVENTS=100000 BENCH_RUNS=3 npm run bench:worker
 *   BENCH_RUNS_AT_ONCE=2 npm run bench:worker  (runs the pipeline keeps in progress; default the worker's)
 *   BENCH_CPU_PROFILE=DIR npm run bench:worker (a .cpuprofile of this process per timed slice, nothing else)
 *   BENCH_HISTORICAL=1 npm run bench:worker    (the events as a historical migration: persons by event time)
 *   BENCH_KEPT_PERSONS=0 npm run bench:worker  (persons committed by earlier runs are read again, not kept)
 *
 * Starts its own PostgreSQL, Kafka mock cluster and chdb ClickHouse HTTP front (tools/testkit;
 * needs postgres and kcat, which scripts/test.sh installs); the raw inserts and the worker
 * write to the same engine over the same HTTP client. Each run uses fresh databases and a
 * fresh topic per 20,000 events (the Kafka mock keeps ~5 MB per partition), all handled by one
 * pipeline as one worker process would; each slice is produced before its clock starts, and the
 * clock runs from the first batch the worker handles to the last row's insert (group joins are
 * not counted).
 *
 * Scenarios:
 *   raw        prebuilt event rows, insertEventValues in batches of WORKER_BATCH (no bus, no persons)
 *   raw pg     (persons only) the person rows the same events leave behind, written straight into
 *              PostgreSQL per WORKER_BATCH events: one transaction with one unnest upsert of the
 *              persons and one unnest insert of the new distinct ids (no reads, no locks; the
 *              properties, the same as the worker's persons end with, are worked out in memory
 *              beforehand); as a rate of the events written
 *   personless events with $process_person_profile=false over 10,000 distinct ids
 *   persons    events with $set over 100,000 distinct ids (person created, then updated)
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { createKafkaBus, topicNames, type ConsumedBatch } from '@sightline/bus';
import { createAnalyticsStore, insertEventValues, migrateClickHouse, type ClickHouseClient, type EventValues } from '@sightline/clickhouse';
import { decodeIngestMessage, encodeIngestMessage, normalizeEvent, personUuidFor, type IngestMessage } from '@sightline/ingestion';
import { createLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { applyPropertyUpdates, personUpdatesFromEvent } from '@sightline/persons';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { startClickHouseFront, startKafkaMock, startPostgres } from '@sightline/local-services';
import { createBenchLauncher } from './bench-launcher';
import { createEventsConsumer } from '@sightline/worker';
import { median } from './bench-process';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WORKER_BATCH = Number(process.env.BENCH_BATCH ?? 10_000);
const TOKEN = 'phc_bench_worker_key';
/** Warnings (a failing batch being retried) would otherwise hide behind a slow figure. */
const logger = createLogger({ service: 'bench-worker', level: 'warn' });
const PRODUCE_CHUNK = Number(process.env.BENCH_PRODUCE_CHUNK ?? 20_000);
const TOPIC_SLICE = 20_000;
/** Runs the pipeline keeps in progress at once (unset: its default). */
const RUNS_AT_ONCE = process.env.BENCH_RUNS_AT_ONCE ? Number(process.env.BENCH_RUNS_AT_ONCE) : undefined;
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'personless,persons').split(',') as Scenario[];
const HISTORICAL = process.env.BENCH_HISTORICAL === '1';
/** BENCH_GATHER_WRITES=0: each run inserts its own rows (the worker before it gathered writes). */
const GATHER_WRITES = process.env.BENCH_GATHER_WRITES !== '0';

type Scenario = 'personless' | 'persons';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function buildMessages(scenario: Scenario, run: number): { key: string; value: Buffer }[] {
  const nowMs = Date.now();
  const distinctIds = scenario === 'persons' ? 100_000 : 10_000;
  return Array.from({ length: EVENTS }, (_, i) => {
    const distinctId = `bench-${run}-${i % distinctIds}`;
    const properties =
      scenario === 'persons'
        ? { $current_url: 'https://example.com/pricing', $set: { plan: i % 3 === 0 ? 'pro' : 'free', seen: i }, $lib: 'web' }
        : { $current_url: 'https://example.com/pricing', $process_person_profile: false, $lib: 'web' };
    const r = normalizeEvent(
      { event: '$pageview', distinct_id: distinctId, properties },
      { token: TOKEN, teamId: 1, nowMs: nowMs + i, sentAt: null, ip: '10.1.2.3', historicalMigration: HISTORICAL },
    );
    if (!r.ok) throw new Error(r.reason);
    return { key: r.key, value: encodeIngestMessage(r.message) };
  });
}

/**
 * The rows the worker would write for these messages, without persons (the raw baseline's
 * input), written by the same insert as the worker's (insertEventValues: RowBinary over HTTP).
 */
function rawRows(messages: { value: Buffer }[]): EventValues[] {
  return messages.map(({ value }) => {
    const m = decodeIngestMessage(value) as IngestMessage & { data: { properties: object } };
    return {
      uuid: m.uuid,
      event: m.event,
      properties: JSON.stringify(m.data.properties),
      timestamp: Date.parse(m.timestamp),
      team_id: 1,
      distinct_id: m.distinct_id,
      elements_chain: '',
      created_at: Date.parse(m.now),
      person_id: personUuidFor(1, m.distinct_id),
      person_created_at: null,
      person_properties: '{}',
      person_mode: 'full',
      groups: [],
    };
  });
}

/**
 * The raw baseline retries like the worker does: a keep-alive socket the server already
 * closed fails once with EPIPE/ECONNRESET (the worker counts that as an outage and retries).
 */
async function insertRetryingStaleSocket(ch: ClickHouseClient, rows: EventValues[]): Promise<void> {
  try {
    await insertEventValues(ch, rows, (row) => row);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'EPIPE' && code !== 'ECONNRESET') throw error;
    await insertEventValues(ch, rows, (row) => row);
  }
}

/**
 * The raw PostgreSQL baseline: per WORKER_BATCH events, the final state of each person they
 * touch (created on first sight, `$set` applied in event order, version bumped once per batch
 * that changes it), written with one upsert of the persons and one insert of the new distinct
 * ids in one transaction. Everything but the writes is worked out before the clock starts.
 */
async function rawPersonWrites(db: MetadataStore, messages: { value: Buffer }[]): Promise<number> {
  interface Person {
    uuid: string;
    distinctId: string;
    properties: Record<string, unknown>;
    version: number;
    createdAt: string;
    id?: string;
  }
  const persons = new Map<string, Person>();
  const batches: { upserts: { uuid: string; properties: string; version: number; createdAt: string }[]; created: Person[] }[] = [];
  for (let i = 0; i < messages.length; i += WORKER_BATCH) {
    const touched = new Map<Person, boolean>();
    for (const { value } of messages.slice(i, i + WORKER_BATCH)) {
      const m = decodeIngestMessage(value) as IngestMessage & { data: { properties: Record<string, unknown> } };
      let person = persons.get(m.distinct_id);
      if (!person) {
        person = { uuid: personUuidFor(1, m.distinct_id), distinctId: m.distinct_id, properties: {}, version: -1, createdAt: m.timestamp };
        persons.set(m.distinct_id, person);
        touched.set(person, true);
      } else if (!touched.has(person)) touched.set(person, false);
      // The properties the worker's person ends with: the event's $set and the properties
      // lifted from it ($current_url as $set and as $set_once $initial_current_url).
      applyPropertyUpdates(person.properties, personUpdatesFromEvent(m.data.properties));
    }
    for (const person of touched.keys()) person.version += 1;
    batches.push({
      upserts: [...touched.keys()].map((p) => ({ uuid: p.uuid, properties: JSON.stringify(p.properties), version: p.version, createdAt: p.createdAt })),
      created: [...touched].filter(([, created]) => created).map(([p]) => p),
    });
  }
  const byUuid = new Map([...persons.values()].map((p) => [p.uuid, p]));
  const t = performance.now();
  for (const { upserts, created } of batches) {
    await db.transaction(async (tx) => {
      const rows = await tx.query<{ id: string; uuid: string }>(
        `INSERT INTO persons (team_id, uuid, properties, version, created_at)
         SELECT 1, u, p::jsonb, v, c FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::timestamptz[]) AS x(u, p, v, c)
         ON CONFLICT (team_id, uuid) DO UPDATE SET properties = EXCLUDED.properties, version = EXCLUDED.version
         RETURNING id::text AS id, uuid::text AS uuid`,
        [upserts.map((u) => u.uuid), upserts.map((u) => u.properties), upserts.map((u) => u.version), upserts.map((u) => u.createdAt)],
      );
      for (const row of rows) byUuid.get(row.uuid)!.id = row.id;
      if (created.length > 0)
        await tx.query(`INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) SELECT 1, * FROM unnest($1::text[], $2::bigint[])`, [
          created.map((p) => p.distinctId),
          created.map((p) => p.id),
        ]);
    });
  }
  return messages.length / ((performance.now() - t) / 1000);
}

/** CPU time (ms) used so far by a process and its live descendants (Linux /proc; 0 elsewhere). */
function processTreeCpuMs(rootPid: number): number {
  const ticks = 100; // USER_HZ on Linux
  const stats = new Map<number, { ppid: number; cpu: number }>();
  let entries: string[] = [];
  try {
    entries = fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return 0;
  }
  for (const entry of entries) {
    try {
      const fields = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      stats.set(Number(entry), { ppid: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // exited meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, depth = 0; p > 1 && depth < 16; p = stats.get(p)?.ppid ?? 0, depth++) if (p === rootPid) return true;
    return false;
  };
  let total = 0;
  for (const [pid, s] of stats) if (inTree(pid)) total += s.cpu;
  return (total * 1000) / ticks;
}

async function freshPostgres(adminUrl: string, name: string): Promise<MetadataStore> {
  const admin = await createMetadataStore({ url: adminUrl });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await createMetadataStore({ url: url.toString() });
  await migratePostgres(db);
  return db;
}

async function freshClickHouse(url: string, name: string): Promise<ClickHouseClient> {
  const root = createAnalyticsStore({ url, user: 'default', password: '', database: 'default' });
  await root.command({ query: `CREATE DATABASE IF NOT EXISTS ${name}` });
  await root.close();
  const ch = createAnalyticsStore({ url, user: 'default', password: '', database: name });
  await migrateClickHouse(ch);
  return ch;
}

async function main() {
  const services = createBenchLauncher('worker');
  const { launcher } = services;
  const [{ postgresAdminUrl }, { kafkaBrokers }, { clickhouseUrl }] = await Promise.all([
    startPostgres(launcher),
    startKafkaMock(launcher),
    startClickHouseFront(launcher),
  ]);
  // The mock broker answers a fetch with one record batch per partition, where real Kafka
  // returns up to the consumer's maxBytesPerPartition of them. The bench producer therefore
  // sends each chunk as one produce request (one record batch per partition), so the worker
  // sees the batch sizes a real broker would hand it; with the gateway's default 900 KB
  // requests the mock caps worker batches at ~400 events. BENCH_PRODUCE_REQUEST_BYTES overrides.
  const maxRequestBytes = Number(process.env.BENCH_PRODUCE_REQUEST_BYTES ?? 64 * 1024 * 1024);
  // The slices are produced before their clock starts; on a loaded machine a 20,000-message
  // produce can outlast the default 5 s send timeout.
  const bus = createKafkaBus({ brokers: kafkaBrokers, clientId: 'bench-worker', maxRequestBytes, sendTimeoutMs: 120_000 }, logger);
  const results: Record<'raw' | Scenario, number[]> = { raw: [], personless: [], persons: [] };
  // CPU per 1,000 events while the worker runs, by process: where a slice's time goes on a small machine.
  const serviceCpu = () => {
    const byService: Record<string, number> = {};
    for (const s of launcher.started) byService[s.process.name] = (byService[s.process.name] ?? 0) + processTreeCpuMs(s.process.pid);
    return byService;
  };
  const cpuPerThousand: Record<Scenario, Record<string, number[]>> = { personless: {}, persons: {} };
  const rawCpuPerThousand: Record<string, number[]> = {};
  const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  /** Per scenario and run: the raw ClickHouse insert, and for persons the raw PostgreSQL write, of the same run. */
  const rawPg: number[] = [];
  const ratios: Record<Scenario, { ch: number[]; pg: number[] }> = { personless: { ch: [], pg: [] }, persons: { ch: [], pg: [] } };
  const steps: Record<Scenario, Record<string, number>> = { personless: {}, persons: {} };
  console.log(
    `worker bench: ${fmt(EVENTS)} events per run, ${RUNS} runs, batches of ${fmt(WORKER_BATCH)}, ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  const profiler = PROFILE_DIR ? new Session() : null;
  if (profiler) {
    fs.mkdirSync(PROFILE_DIR!, { recursive: true });
    profiler.connect();
    await profiler.post('Profiler.enable');
  }
  try {
    for (let run = 0; run < RUNS; run++) {
      for (const scenario of SCENARIOS) {
        const messages = buildMessages(scenario, run);

        // Raw baseline: the same rows straight into ClickHouse.
        const rawCh = await freshClickHouse(clickhouseUrl, `bench_raw_${scenario}_${run}`);
        const rows = rawRows(messages);
        const rawCpuBefore: Record<string, number> = { ...serviceCpu(), bench: cpuMs(process.cpuUsage()) };
        const t = performance.now();
        for (let i = 0; i < rows.length; i += WORKER_BATCH) await insertRetryingStaleSocket(rawCh, rows.slice(i, i + WORKER_BATCH));
        const rawRate = rows.length / ((performance.now() - t) / 1000);
        const rawCpuAfter: Record<string, number> = { ...serviceCpu(), bench: cpuMs(process.cpuUsage()) };
        (rawCpuPerThousand['raw ClickHouse: chdb-http-front'] ??= []).push(
          (1000 * (rawCpuAfter['chdb-http-front']! - rawCpuBefore['chdb-http-front']!)) / rows.length,
        );
        (rawCpuPerThousand['raw ClickHouse: bench process'] ??= []).push((1000 * (rawCpuAfter['bench']! - rawCpuBefore['bench']!)) / rows.length);
        results.raw.push(rawRate);

        // Raw PostgreSQL baseline (persons): the same events' person rows straight into PostgreSQL.
        let rawPgRate: number | null = null;
        if (scenario === 'persons') {
          const rawDb = await freshPostgres(postgresAdminUrl, `bench_raw_pg_${run}`);
          const pgBefore = serviceCpu()['postgres']!;
          rawPgRate = await rawPersonWrites(rawDb, messages);
          // Includes working out the rows beforehand (the bench process, not PostgreSQL).
          (rawCpuPerThousand['raw PostgreSQL: postgres'] ??= []).push((1000 * (serviceCpu()['postgres']! - pgBefore)) / messages.length);
          rawPg.push(rawPgRate);
          await rawDb.close();
        }

        // Worker: bus → pipeline (persons, groups, enrichment) → ClickHouse.
        const name = `bench_${scenario}_${run}`;
        const wch = await freshClickHouse(clickhouseUrl, name);
        const db = await freshPostgres(postgresAdminUrl, name);
        await bootstrapInstance(db, { projectApiKey: TOKEN });
        // The Kafka mock keeps only ~5 MB per partition (~20 MB per topic), so the events go
        // through in slices of TOPIC_SLICE, one topic each, produced before the slice is timed.
        const metrics: Metrics = createMetrics();
        // One pipeline for the whole run, as one worker process keeps one for its topic: what it
        // remembers between batches (copies already written, personless ids, group types)
        // carries across the slices. Its dead letters (none expected) go to the run's own topic.
        const handler = createEventsConsumer({
          ch: wch,
          db,
          bus,
          topics: topicNames(`${name}.`),
          resolveTeam: async () => 1,
          metrics,
          logger,
          runsAtOnce: RUNS_AT_ONCE,
          // As the worker process runs it (createWorker): runs share an insert of up to a run's size.
          gatherWrites: GATHER_WRITES ? { maxEvents: WORKER_BATCH } : undefined,
          keptPersons: process.env.BENCH_KEPT_PERSONS ? Number(process.env.BENCH_KEPT_PERSONS) : undefined,
        });
        let busyMs = 0;
        let handled = 0;
        const cpuSpent: Record<string, number> = {};
        let batches = 0;
        for (let slice = 0; slice * TOPIC_SLICE < messages.length; slice++) {
          const part = messages.slice(slice * TOPIC_SLICE, (slice + 1) * TOPIC_SLICE);
          const topics = topicNames(`${name}.${slice}.`);
          for (let i = 0; i < part.length; i += PRODUCE_CHUNK) await bus.send(topics.events, part.slice(i, i + PRODUCE_CHUNK));
          let first = 0;
          let last = 0;
          // This process's CPU from the first batch to the last: the worker's share (all its threads).
          let cpuAtFirst: NodeJS.CpuUsage | null = null;
          let cpuAtLast: NodeJS.CpuUsage | null = null;
          let sliceHandled = 0;
          let finished!: () => void;
          const allHandled = new Promise<void>((resolve) => (finished = resolve));
          const subscribedAt = performance.now();
          const cpuBefore = serviceCpu();
          const sub = await bus.subscribe({
            groupId: `${name}-${slice}-writer`,
            topic: topics.events,
            maxBatchSize: WORKER_BATCH,
            handler: async (batch: ConsumedBatch) => {
              if (first === 0) {
                first = performance.now();
                cpuAtFirst = process.cpuUsage();
                if (profiler) await profiler.post('Profiler.start');
              }
              await handler(batch);
              sliceHandled += batch.messages.length;
              batches++;
              last = performance.now();
              cpuAtLast = process.cpuUsage();
              if (sliceHandled >= part.length) finished();
            },
          });
          // A stalled run is reported instead of hanging the bench.
          const stall = setInterval(() => {
            if (performance.now() - Math.max(last, first, subscribedAt) > 60_000) {
              console.error(`${scenario}: no progress for 60 s (${sliceHandled}/${part.length} of slice ${slice} handled)`);
              process.exit(1);
            }
          }, 5000);
          await allHandled;
          if (profiler) {
            const { profile } = await profiler.post('Profiler.stop');
            fs.writeFileSync(path.join(PROFILE_DIR!, `${scenario}-${run}-${slice}.cpuprofile`), JSON.stringify(profile));
          }
          for (const [service, ms] of Object.entries(serviceCpu())) cpuSpent[service] = (cpuSpent[service] ?? 0) + ms - (cpuBefore[service] ?? 0);
          if (cpuAtFirst && cpuAtLast) cpuSpent['worker (bench process)'] = (cpuSpent['worker (bench process)'] ?? 0) + cpuMs(cpuAtLast) - cpuMs(cpuAtFirst);
          clearInterval(stall);
          await sub.stop();
          busyMs += last - first;
          handled += sliceHandled;
        }
        const rate = EVENTS / (busyMs / 1000);
        results[scenario].push(rate);
        let writes = 0;
        for (const v of (await metrics.pipelineStepDuration.get()).values) {
          if (v.metricName?.endsWith('_sum')) steps[scenario][v.labels.step as string] = (steps[scenario][v.labels.step as string] ?? 0) + v.value;
          if (v.metricName?.endsWith('_count') && v.labels.step === 'write') writes = v.value;
        }
        ratios[scenario].ch.push(rate / rawRate);
        for (const [service, ms] of Object.entries(cpuSpent)) (cpuPerThousand[scenario][service] ??= []).push((1000 * ms) / EVENTS);
        if (rawPgRate !== null) ratios[scenario].pg.push(rate / rawPgRate);
        console.log(
          `run ${run + 1} ${scenario.padEnd(10)} worker ${fmt(rate)} ev/s   raw ClickHouse insert of the same rows ${fmt(rawRate)} rows/s, ratio ${(rate / rawRate).toFixed(2)}` +
            (rawPgRate === null ? '' : `   raw PostgreSQL write of the same person rows ${fmt(rawPgRate)} ev/s, ratio ${(rate / rawPgRate).toFixed(2)}`) +
            `   (${fmt(handled / batches)} events per batch, ${fmt(handled / writes)} per insert, load ${os.loadavg()[0]!.toFixed(1)})`,
        );
        await db.close();
        await wch.close();
        await rawCh.close();
      }
    }
  } finally {
    await bus.close();
    await services.stopAll(1000);
  }

  const raw = median(results.raw);
  console.log('\nmedians');
  console.log(`raw ClickHouse insert      ${fmt(raw)} rows/s`);
  if (rawPg.length > 0) console.log(`raw PostgreSQL write       ${fmt(median(rawPg))} ev/s (the person rows of that many events)`);
  for (const scenario of SCENARIOS) {
    const m = median(results[scenario]);
    const total = Object.values(steps[scenario]).reduce((a, b) => a + b, 0);
    const breakdown = Object.entries(steps[scenario])
      .map(([step, s]) => `${step} ${((100 * s) / total).toFixed(0)}%`)
      .join(', ');
    const pg = ratios[scenario].pg.length > 0 ? `, ${median(ratios[scenario].pg).toFixed(2)} × raw PostgreSQL write` : '';
    console.log(
      `${scenario.padEnd(26)} ${fmt(m)} ev/s = ${median(ratios[scenario].ch).toFixed(2)} × raw ClickHouse insert${pg}   (medians of per-run ratios; pipeline time: ${breakdown})`,
    );
    const cpu = Object.entries(cpuPerThousand[scenario])
      .map(([service, ms]) => `${service} ${median(ms).toFixed(1)}`)
      .join(', ');
    console.log(
      `${''.padEnd(26)} CPU ms per 1,000 events (median; services over each slice from subscribe to done, the worker from its first batch to its last): ${cpu}; wall ${(1e6 / m).toFixed(1)} ms`,
    );
  }
  console.log(
    `baselines' CPU ms per 1,000 rows (median): ${Object.entries(rawCpuPerThousand)
      .map(([what, ms]) => `${what} ${median(ms).toFixed(1)}`)
      .join(', ')}`,
  );
  console.log('targets: personless ≥ 0.6 × raw ClickHouse insert; persons ≥ 0.4 × raw ClickHouse insert and ≥ 0.5 × raw PostgreSQL write');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
