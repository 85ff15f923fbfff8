/**
 * Worker throughput, end to end from the bus into ClickHouse, against the raw ClickHouse
 * insert rate of the same rows and (with persons) the raw PostgreSQL write of the same person
 * rows, both measured in the same run; each run prints its ratios, the summary their medians.
 *
 *   npm run bench:worker                      (defaults below)
 *   BENCH_EVENTS=100000 BENCH_RUNS=3 npm run bench:worker
 *   BENCH_SCENARIOS=personless npm run bench:worker
 *   BENCH_TRACE=1 npm run bench:worker         (a line per slice pair: times, CPU, GC pauses, settle waits)
 *   BENCH_RUNS_AT_ONCE=2 npm run bench:worker  (runs the pipeline keeps in progress; default the worker's)
 *   BENCH_CPU_PROFILE=DIR npm run bench:worker (a .cpuprofile of this process per worker slice, nothing else)
 *   BENCH_HISTORICAL=1 npm run bench:worker    (the events as a historical migration: persons by event time)
 *   BENCH_KEPT_PERSONS=0 npm run bench:worker  (persons committed by earlier runs are read again, not kept)
 *   BENCH_FLOOR=sequential npm run bench:worker (personless: the worker side is the floor of bench/worker-floor.ts,
 *                                                decode and insert only; BENCH_FLOOR=pipelined: its batches do not
 *                                                wait for their insert, so decode and insert overlap)
 *
 * Starts its own PostgreSQL, Kafka mock cluster and chdb ClickHouse HTTP front (tools/testkit;
 * needs postgres and kcat, which scripts/test.sh installs); the raw inserts and the worker
 * write to the same engine over the same HTTP client, each into its own fresh database per run.
 *
 * How the two sides are compared (bench/paired-slices.ts). A run's events go in slices of
 * TOPIC_SLICE (the Kafka mock keeps ~5 MB per partition, so one topic per slice), each built
 * just before it is used, so this process holds one slice at a time. Each slice is handled by
 * both sides, one after the other, as a pair: the raw side inserts the slice's rows, the worker
 * consumes the slice's topic through the run's one pipeline. Which side goes first alternates
 * from pair to pair. Before every timed slice of either side, the bench waits until ClickHouse
 * runs no merge (system.merges empty). The first pair warms both sides up and is left out of
 * both. A pair's ratio is the worker's rate over the raw side's; a run's ratio is the median of
 * its pairs' ratios; the summary takes the median of the runs' ratios.
 *
 * Why so: the raw side used to be one timed insert of the whole run (~1 s at 200,000 rows),
 * started right after its tables were created and the run's 400,000 message and row objects were
 * built, and its rate swung 181k-299k rows/s between runs on an idle machine, more than the
 * worker did. In that one window the chdb front merged the parts of the run's earlier inserts (a
 * third of its CPU: ClickHouse merges while inserting) and this process's V8 ran a concurrent
 * major collection (150-200 ms of CPU, most on V8's helper threads, taking a core from chdb on
 * 2 cores), each landing at a different point of the window from run to run; the first run's
 * first inserts were also two to eight times slower (JIT, fresh sockets). Slices, settled and
 * alternated, expose both sides to the same machine state, and a disturbance moves one pair, not
 * the run. This process's heap is not collected by force between slices: tried, it cost the
 * worker's slices ~5 ms of CPU per 1,000 events more on V8's helper threads.
 *
 * What each figure is, then: the raw rate is chdb's insert of already-built rows in batches of
 * WORKER_BATCH (their RowBinary encoding in this process included) with no merge left over from
 * earlier slices: the insert at its best on this machine, not a steady state, so the ratio does
 * not flatter the worker. The merges a slice's own inserts start count in that slice while its
 * clock runs, for both sides; what is still merging when the clock stops is waited out, untimed,
 * before the next slice (the worker's longer slices keep more of their own merges in their time).
 * The worker's clock runs from the first batch it handles to the last row's insert (group joins
 * are not counted), each slice produced before either side of its pair is timed. The raw
 * PostgreSQL write (persons) is still one pass over the run's person rows before the slices, not
 * paired, its first slice's batches untimed as a warm-up. The CPU ratio beside each run is all
 * processes' CPU for the raw insert over all processes' CPU for the worker, same events: the wall
 * ratio if both sides were bound by CPU alone, a cross-check (on a loaded machine it moved as
 * much as the wall ratio).
 *
 * What "worker (bench process)" CPU counts: this process's CPU, all threads, from the first
 * batch's handler to the last batch's end, measured slices only. That is the pipeline, plus what
 * bench/worker-cpu.ts leaves out: kafkajs fetching and decoding the slice's later batches (~1 ms
 * per 1,000 events: a no-op handler over the same topics), the bus consumer's loop, and the
 * garbage collection of this process's whole heap, split as "main thread" (JavaScript, GC pauses)
 * and "helper threads" (V8's concurrent marking and parallel scavenges, libuv's pool). Writes
 * gather across runs as the worker process does (gatherWrites).
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
import { PerformanceObserver } from 'node:perf_hooks';
import { bootstrapInstance } from '@sightline/accounts';
import { createKafkaBus, topicNames, type ConsumedBatch } from '@sightline/bus';
import { createAnalyticsStore, insertEventValues, migrateClickHouse, queryClickhouse, type ClickHouseClient, type EventValues } from '@sightline/clickhouse';
import { decodeIngestMessage, encodeIngestMessage, normalizeEvent, personUuidFor, type IngestMessage } from '@sightline/ingestion';
import { createLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { applyPropertyUpdates, personUpdatesFromEvent } from '@sightline/persons';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { startClickHouseFront, startKafkaMock, startPostgres } from '@sightline/local-services';
import { createBenchLauncher } from './bench-launcher';
import { createFloorConsumer } from './worker-floor';
import { createEventsConsumer, gatheredInsertMaxEvents } from '@sightline/worker';
import { median } from './bench-process';
import { threadCpuSeconds } from './thread-cpu';
import { pairRun, rawGoesFirst, type PairedRun, type SlicePair, type TimedSlice } from './paired-slices';

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
/**
 * BENCH_VERSUS="maxEvents=10000": the raw ClickHouse side is replaced by the worker
 * with its defaults (its own databases), the worker side takes these gatherWrites options; the
 * ratios are then the variant's rate over the default's, paired slice by slice in the same run.
 */
const VERSUS = process.env.BENCH_VERSUS
  ? Object.fromEntries(process.env.BENCH_VERSUS.split(',').map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])]))
  : undefined;
/** BENCH_FLOOR: the worker side is the floor consumer (bench/worker-floor.ts), its batches waiting for their insert or not. */
const FLOOR = process.env.BENCH_FLOOR as 'sequential' | 'pipelined' | undefined;
if (FLOOR !== undefined && FLOOR !== 'sequential' && FLOOR !== 'pipelined') throw new Error('BENCH_FLOOR is sequential or pipelined');
/** BENCH_TRACE=1: a line per slice pair (times, CPU, GC pauses, settle waits). */
const TRACE = process.env.BENCH_TRACE === '1';
/** The longest a slice waits for the previous slices' merges before it starts anyway. */
const SETTLE_LIMIT_MS = 10_000;

type Scenario = 'personless' | 'persons';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Events `from` to `to` of a run (built per slice, so the bench process holds one slice at a time). */
function buildMessages(scenario: Scenario, run: number, nowMs: number, from: number, to: number): { key: string; value: Buffer }[] {
  const distinctIds = scenario === 'persons' ? 100_000 : 10_000;
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
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
 * The batches of the first TOPIC_SLICE events warm up untimed, as the first slice pair does for
 * the worker and the raw ClickHouse insert.
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
  const warmUpBatches = Math.ceil(Math.min(TOPIC_SLICE, messages.length) / WORKER_BATCH);
  let t = performance.now();
  for (const [index, { upserts, created }] of batches.entries()) {
    if (index === warmUpBatches) t = performance.now();
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
  const timedEvents = messages.length - Math.min(warmUpBatches * WORKER_BATCH, messages.length);
  return timedEvents / ((performance.now() - t) / 1000);
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

/** What one timed slice of either side leaves behind besides its time. */
interface SliceCost {
  /** CPU ms by process: the services' over the slice, the bench process's (the worker, or the raw insert's encoding). */
  cpu: Record<string, number>;
  /** Main-thread garbage-collection pauses of the bench process inside the slice (ms). */
  gcPauseMs: number;
  /** The worker's CPU ms in this process by thread (worker slices only): the part of `cpu`'s worker figure each kind of thread took. */
  threads?: Record<string, number>;
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
  const probe = createAnalyticsStore({ url: clickhouseUrl, user: 'default', password: '', database: 'default' });
  const serviceCpu = () => {
    const byService: Record<string, number> = {};
    for (const s of launcher.started) byService[s.process.name] = (byService[s.process.name] ?? 0) + processTreeCpuMs(s.process.pid);
    return byService;
  };
  const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  const gcPauses: { at: number; ms: number }[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcPauses.push({ at: entry.startTime, ms: entry.duration });
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const gcPauseMsBetween = async (from: number, to: number) => {
    await new Promise((r) => setImmediate(r)); // GC entries are delivered asynchronously
    return gcPauses.filter((g) => g.at >= from && g.at <= to).reduce((total, g) => total + g.ms, 0);
  };
  const runs: Record<Scenario, PairedRun[]> = { personless: [], persons: [] };
  const rawPg: number[] = [];
  const pgRatios: number[] = [];
  // CPU per 1,000 events or rows over the measured slices, by process, per run.
  const cpuPerThousand: Record<Scenario, Record<string, number[]>> = { personless: {}, persons: {} };
  const rawCpuPerThousand: Record<string, number[]> = {};
  const steps: Record<Scenario, Record<string, number>> = { personless: {}, persons: {} };
  const settleWaits: number[] = [];
  const cpuRatios: Record<Scenario, number[]> = { personless: [], persons: [] };
  if (FLOOR) console.log(`BENCH_FLOOR=${FLOOR}: "worker" below is the floor consumer (decode and insert only), not the worker`);
  if (VERSUS) console.log(`BENCH_VERSUS: "raw ClickHouse" below is the worker with its defaults; the worker side takes ${JSON.stringify(VERSUS)}`);
  console.log(
    `worker bench: ${fmt(EVENTS)} events per run in slices of ${fmt(TOPIC_SLICE)} (the first pair a warm-up), ${RUNS} runs, batches of ${fmt(WORKER_BATCH)}, ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  /**
   * Before every timed slice of either side: the previous slices' merges done. The bench process's
   * heap is left alone: a forced full collection here cost the worker's next slice ~5 ms of CPU
   * per 1,000 events more, on V8's helper threads (measured, see the file comment).
   */
  const settle = async () => {
    const started = performance.now();
    for (;;) {
      const [merging] = await queryClickhouse<{ n: string }>(probe, { kind: 'bench.merges', teamId: null, sql: 'SELECT count() AS n FROM system.merges' });
      if (Number(merging!.n) === 0 || performance.now() - started > SETTLE_LIMIT_MS) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    settleWaits.push(performance.now() - started);
  };

  const profiler = PROFILE_DIR ? new Session() : null;
  if (profiler) {
    fs.mkdirSync(PROFILE_DIR!, { recursive: true });
    profiler.connect();
    await profiler.post('Profiler.enable');
  }
  try {
    for (let run = 0; run < RUNS; run++) {
      for (const scenario of SCENARIOS) {
        const runStartMs = Date.now();

        // Raw PostgreSQL baseline (persons): the whole run's person rows, before the slices.
        let rawPgRate: number | null = null;
        if (scenario === 'persons') {
          const rawDb = await freshPostgres(postgresAdminUrl, `bench_raw_pg_${run}`);
          const pgBefore = serviceCpu()['postgres']!;
          rawPgRate = await rawPersonWrites(rawDb, buildMessages(scenario, run, runStartMs, 0, EVENTS));
          (rawCpuPerThousand['raw PostgreSQL: postgres'] ??= []).push((1000 * (serviceCpu()['postgres']! - pgBefore)) / EVENTS);
          rawPg.push(rawPgRate);
          await rawDb.close();
        }

        // Both sides' databases exist before either side's first slice.
        const rawCh = await freshClickHouse(clickhouseUrl, `bench_raw_${scenario}_${run}`);
        const name = `bench_${scenario}_${run}`;
        const wch = await freshClickHouse(clickhouseUrl, name);
        const db = await freshPostgres(postgresAdminUrl, name);
        await bootstrapInstance(db, { projectApiKey: TOKEN });
        const metrics: Metrics = createMetrics();
        // One pipeline for the whole run, as one worker process keeps one for its topic: what it
        // remembers between batches (copies already written, personless ids, group types)
        // carries across the slices. Its dead letters (none expected) go to the run's own topic.
        const pipeline = (ch: ClickHouseClient, store: MetadataStore, of: Metrics, gatherWrites: Parameters<typeof createEventsConsumer>[0]['gatherWrites']) =>
          createEventsConsumer({
            ch,
            db: store,
            bus,
            topics: topicNames(`${name}.`),
            resolveTeam: async () => 1,
            metrics: of,
            logger,
            runsAtOnce: RUNS_AT_ONCE,
            gatherWrites,
            keptPersons: process.env.BENCH_KEPT_PERSONS ? Number(process.env.BENCH_KEPT_PERSONS) : undefined,
          });
        // As createWorker: an insert takes up to a run of each partition consumed at once.
        const defaults = GATHER_WRITES ? { maxEvents: gatheredInsertMaxEvents(WORKER_BATCH) } : undefined;
        const floor = FLOOR ? createFloorConsumer(wch, { maxEvents: gatheredInsertMaxEvents(WORKER_BATCH), pipelined: FLOOR === 'pipelined' }) : undefined;
        const handler = floor
          ? (batch: ConsumedBatch) => floor.handle(batch)
          : pipeline(wch, db, metrics, VERSUS ? { maxEvents: gatheredInsertMaxEvents(WORKER_BATCH), ...VERSUS } : defaults);
        // BENCH_VERSUS: the default worker, on databases of its own, in the raw side's place.
        const versusCh = VERSUS ? await freshClickHouse(clickhouseUrl, `${name}_default`) : undefined;
        const versusDb = VERSUS ? await freshPostgres(postgresAdminUrl, `${name}_default`) : undefined;
        if (versusDb) await bootstrapInstance(versusDb, { projectApiKey: TOKEN });
        const versusHandler = versusCh && versusDb ? pipeline(versusCh, versusDb, createMetrics(), defaults) : undefined;

        /** Raw side: the slice's prebuilt rows straight into ClickHouse, WORKER_BATCH per insert. */
        const rawSlice = async (sliceRows: EventValues[]): Promise<TimedSlice & SliceCost> => {
          const servicesBefore = serviceCpu();
          const cpuBefore = process.cpuUsage();
          const t = performance.now();
          for (let i = 0; i < sliceRows.length; i += WORKER_BATCH) await insertRetryingStaleSocket(rawCh, sliceRows.slice(i, i + WORKER_BATCH));
          const end = performance.now();
          const cpu: Record<string, number> = { 'bench process': cpuMs(process.cpuUsage(cpuBefore)) };
          for (const [service, ms] of Object.entries(serviceCpu())) cpu[service] = ms - (servicesBefore[service] ?? 0);
          return { count: sliceRows.length, ms: end - t, cpu, gcPauseMs: await gcPauseMsBetween(t, end) };
        };

        /** Events and batches of the measured side only (not BENCH_VERSUS's default worker): its events per insert. */
        let handled = 0;
        let batches = 0;
        /** Worker side: the slice's topic, already produced, through one subscription of the run's pipeline. */
        const workerSlice = async (slice: number, count: number, sliceHandler = handler, group = 'writer'): Promise<TimedSlice & SliceCost> => {
          let first = 0;
          let last = 0;
          // This process's CPU from the first batch to the last: the worker's share (all its threads).
          let cpuAtFirst: NodeJS.CpuUsage | null = null;
          let cpuAtLast: NodeJS.CpuUsage | null = null;
          // The same by thread: the JavaScript thread, and V8's and libuv's helper threads (concurrent GC marking, file writes).
          let threadsAtFirst = new Map<string, number>();
          let sliceHandled = 0;
          let finished!: () => void;
          const allHandled = new Promise<void>((resolve) => (finished = resolve));
          const subscribedAt = performance.now();
          const servicesBefore = serviceCpu();
          const threads: Record<string, number> = {};
          const sub = await bus.subscribe({
            groupId: `${name}-${slice}-${group}`,
            topic: topicNames(`${name}.${slice}.`).events,
            maxBatchSize: WORKER_BATCH,
            handler: async (batch: ConsumedBatch) => {
              if (first === 0) {
                first = performance.now();
                threadsAtFirst = threadCpuSeconds(process.pid, { mainName: 'main' });
                cpuAtFirst = process.cpuUsage();
                if (profiler) await profiler.post('Profiler.start');
              }
              await sliceHandler(batch);
              sliceHandled += batch.messages.length;
              if (sliceHandler === handler) batches++;
              // A pipelined floor's slice ends with its last insert, not its last batch's handler.
              if (sliceHandled >= count && floor && sliceHandler === handler) await floor.drained();
              last = performance.now();
              cpuAtLast = process.cpuUsage();
              if (sliceHandled >= count) {
                for (const [thread, seconds] of threadCpuSeconds(process.pid, { mainName: 'main' })) {
                  const kind = thread === 'main' ? 'worker: main thread' : 'worker: helper threads';
                  threads[kind] = (threads[kind] ?? 0) + 1000 * (seconds - (threadsAtFirst.get(thread) ?? 0));
                }
                finished();
              }
            },
          });
          // A stalled run is reported instead of hanging the bench.
          const stall = setInterval(() => {
            if (performance.now() - Math.max(last, first, subscribedAt) > 60_000) {
              console.error(`${scenario}: no progress for 60 s (${sliceHandled}/${count} of slice ${slice} handled)`);
              process.exit(1);
            }
          }, 5000);
          await allHandled;
          clearInterval(stall);
          if (profiler) {
            const { profile } = await profiler.post('Profiler.stop');
            fs.writeFileSync(path.join(PROFILE_DIR!, `${scenario}-${run}-${slice}.cpuprofile`), JSON.stringify(profile));
          }
          const cpu: Record<string, number> = {};
          for (const [service, ms] of Object.entries(serviceCpu())) cpu[service] = ms - (servicesBefore[service] ?? 0);
          if (cpuAtFirst && cpuAtLast) cpu['worker (bench process)'] = cpuMs(cpuAtLast) - cpuMs(cpuAtFirst);
          await sub.stop();
          if (sliceHandler === handler) handled += sliceHandled;
          return { count: sliceHandled, ms: last - first, cpu, threads, gcPauseMs: await gcPauseMsBetween(first, last) };
        };

        const pairs: SlicePair[] = [];
        const rawCpu: Record<string, number> = {};
        const workerCpu: Record<string, number> = {};
        const workerThreadCpu: Record<string, number> = {};
        for (let slice = 0; slice * TOPIC_SLICE < EVENTS; slice++) {
          const from = slice * TOPIC_SLICE;
          const part = buildMessages(scenario, run, runStartMs, from, Math.min(from + TOPIC_SLICE, EVENTS));
          const rows = rawRows(part);
          // The Kafka mock keeps only ~5 MB per partition (~20 MB per topic): one topic per slice,
          // produced before either side of the pair is timed.
          const topic = topicNames(`${name}.${slice}.`).events;
          for (let i = 0; i < part.length; i += PRODUCE_CHUNK) await bus.send(topic, part.slice(i, i + PRODUCE_CHUNK));
          let raw: (TimedSlice & SliceCost) | undefined;
          let worker: (TimedSlice & SliceCost) | undefined;
          for (const side of rawGoesFirst(slice) ? ['raw', 'worker'] : ['worker', 'raw']) {
            await settle();
            if (side === 'raw') raw = versusHandler ? await workerSlice(slice, part.length, versusHandler, 'default') : await rawSlice(rows);
            else worker = await workerSlice(slice, part.length);
          }
          pairs.push({ raw: raw!, worker: worker! });
          if (TRACE)
            console.log(
              `  pair ${slice}${slice === 0 ? ' (warm-up)' : ''}, ${rawGoesFirst(slice) ? 'raw' : 'worker'} first: raw ${raw!.ms.toFixed(0)} ms (front CPU ${(raw!.cpu['chdb-http-front'] ?? 0).toFixed(0)}, bench CPU ${(raw!.cpu['bench process'] ?? raw!.cpu['worker (bench process)'] ?? 0).toFixed(0)}, GC pauses ${raw!.gcPauseMs.toFixed(0)}), ` +
                `worker ${worker!.ms.toFixed(0)} ms (front CPU ${(worker!.cpu['chdb-http-front'] ?? 0).toFixed(0)}, worker CPU ${(worker!.cpu['worker (bench process)'] ?? 0).toFixed(0)}, GC pauses ${worker!.gcPauseMs.toFixed(0)}), ` +
                `ratio ${(worker!.count / worker!.ms / (raw!.count / raw!.ms)).toFixed(2)}, settle waits ${settleWaits
                  .slice(-2)
                  .map((w) => w.toFixed(0))
                  .join('/')} ms, load ${os.loadavg()[0]!.toFixed(1)}`,
            );
          if (slice === 0) continue; // the warm-up pair is left out of every figure
          for (const [what, ms] of Object.entries(raw!.cpu)) rawCpu[what] = (rawCpu[what] ?? 0) + ms;
          for (const [what, ms] of Object.entries(worker!.cpu)) workerCpu[what] = (workerCpu[what] ?? 0) + ms;
          for (const [what, ms] of Object.entries(worker!.threads ?? {})) workerThreadCpu[what] = (workerThreadCpu[what] ?? 0) + ms;
        }
        const paired = pairRun(pairs);
        runs[scenario].push(paired);
        const measuredEvents = EVENTS - Math.min(TOPIC_SLICE, EVENTS);
        // All processes' CPU for the same events: the ratio if both sides were bound by CPU alone.
        const total = (cpu: Record<string, number>) => Object.values(cpu).reduce((a, b) => a + b, 0);
        const cpuRatio = total(rawCpu) / total(workerCpu);
        cpuRatios[scenario].push(cpuRatio);
        for (const [what, ms] of Object.entries({ ...workerCpu, ...workerThreadCpu }))
          (cpuPerThousand[scenario][what] ??= []).push((1000 * ms) / measuredEvents);
        for (const what of ['chdb-http-front', 'bench process'])
          (rawCpuPerThousand[`raw ClickHouse: ${what}`] ??= []).push((1000 * (rawCpu[what] ?? 0)) / measuredEvents);
        let writes = floor?.inserts ?? 0;
        for (const v of (await metrics.pipelineStepDuration.get()).values) {
          if (v.metricName?.endsWith('_sum')) steps[scenario][v.labels.step as string] = (steps[scenario][v.labels.step as string] ?? 0) + v.value;
          if (v.metricName?.endsWith('_count') && v.labels.step === 'write' && !floor) writes = v.value;
        }
        if (rawPgRate !== null) pgRatios.push(paired.workerRate / rawPgRate);
        console.log(
          `run ${run + 1} ${scenario.padEnd(10)} worker ${fmt(paired.workerRate)} ev/s   raw ClickHouse insert of the same rows ${fmt(paired.rawRate)} rows/s   ` +
            `ratio ${paired.ratio.toFixed(2)} (median of ${paired.pairs} pairs, ${Math.min(...paired.ratios).toFixed(2)}–${Math.max(...paired.ratios).toFixed(2)}; summed rates ${(paired.workerRate / paired.rawRate).toFixed(2)}; CPU ratio ${cpuRatio.toFixed(2)})` +
            (rawPgRate === null
              ? ''
              : `   raw PostgreSQL write of the same person rows ${fmt(rawPgRate)} ev/s, ratio ${(paired.workerRate / rawPgRate).toFixed(2)}`) +
            `   (${fmt(handled / batches)} events per batch, ${fmt(handled / writes)} per insert, load ${os.loadavg()[0]!.toFixed(1)})`,
        );
        await db.close();
        await wch.close();
        await rawCh.close();
        await versusDb?.close();
        await versusCh?.close();
      }
    }
  } finally {
    gcObserver.disconnect();
    await probe.close();
    await bus.close();
    await services.stopAll(1000);
  }

  const allRaw = SCENARIOS.flatMap((scenario) => runs[scenario].map((r) => r.rawRate));
  console.log('\nmedians of the runs');
  console.log(`raw ClickHouse insert      ${fmt(median(allRaw))} rows/s (runs ${allRaw.map(fmt).join(', ')})`);
  if (rawPg.length > 0)
    console.log(`raw PostgreSQL write       ${fmt(median(rawPg))} ev/s (the person rows of that many events; runs ${rawPg.map(fmt).join(', ')})`);
  for (const scenario of SCENARIOS) {
    const rates = runs[scenario].map((r) => r.workerRate);
    const ratios = runs[scenario].map((r) => r.ratio);
    const total = Object.values(steps[scenario]).reduce((a, b) => a + b, 0);
    const breakdown = Object.entries(steps[scenario])
      .map(([step, s]) => `${step} ${((100 * s) / total).toFixed(0)}%`)
      .join(', ');
    const pg = scenario === 'persons' && pgRatios.length > 0 ? `, ${median(pgRatios).toFixed(2)} × raw PostgreSQL write` : '';
    console.log(
      `${scenario.padEnd(26)} ${fmt(median(rates))} ev/s = ${median(ratios).toFixed(2)} × raw ClickHouse insert${pg}   (run ratios ${ratios.map((r) => r.toFixed(2)).join(', ')}; pipeline time: ${breakdown})`,
    );
    const cpu = Object.entries(cpuPerThousand[scenario])
      .map(([service, ms]) => `${service} ${median(ms).toFixed(1)}`)
      .join(', ');
    console.log(
      `${''.padEnd(26)} CPU ratio ${median(cpuRatios[scenario]).toFixed(2)} (runs ${cpuRatios[scenario].map((r) => r.toFixed(2)).join(', ')}): the raw insert's CPU in all processes ÷ the worker's, for the same events`,
    );
    console.log(
      `${''.padEnd(26)} CPU ms per 1,000 events (median; services over each slice from subscribe to done, the worker from its first batch to its last, measured slices only): ${cpu}; wall ${(1e6 / median(rates)).toFixed(1)} ms`,
    );
  }
  console.log(
    `baselines' CPU ms per 1,000 rows (median): ${Object.entries(rawCpuPerThousand)
      .map(([what, ms]) => `${what} ${median(ms).toFixed(1)}`)
      .join(', ')}`,
  );
  console.log(`settling before each slice: median ${median(settleWaits).toFixed(0)} ms, longest ${Math.max(...settleWaits).toFixed(0)} ms`);
  console.log('targets: personless ≥ 0.6 × raw ClickHouse insert; persons ≥ 0.5 × raw PostgreSQL write');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
