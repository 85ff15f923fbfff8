/**
 * The worker's CPU per 1,000 events, without the bus: the events pipeline (parse → team →
 * normalize → persons → RowBinary insert → definitions) handed batches of bus-format
 * messages straight, against a real PostgreSQL and chdb ClickHouse front (tools/testkit).
 * CPU time of this process (all its threads) and its GC pause time are measured over the
 * timed passes; on a machine shared with other work they move far less than throughput does.
 *
 * What it counts, against bench:worker's "worker (bench process)" figure (1-3 ms per 1,000
 * events higher on the same code): the pipeline alone, from the call with a pass's batches to
 * the last insert's answer. Not counted here: the Kafka fetch and kafkajs's decode of each batch
 * (~1 ms per 1,000), the bus consumer's loop, and the larger heap bench:worker's process holds
 * (its V8 helper threads' share). Each batch inserts alone here (no gatherWrites); gathering
 * moved this figure by under 0.2 ms, as did the worker's --max-semi-space-size=64.
 *
 *   node --import tsx bench/worker-cpu.ts
 *   BENCH_EVENTS=40000 BENCH_PASSES=5 BENCH_SCENARIO=persons node --import tsx bench/worker-cpu.ts
 *   BENCH_CPU_PROFILE=FILE node --import tsx bench/worker-cpu.ts   (a .cpuprofile of the timed passes)
 *   BENCH_HEAP_PROFILE=FILE node --import tsx bench/worker-cpu.ts  (a sampled .heapprofile of what they allocate)
 *   BENCH_SCENARIO=floor node --import tsx bench/worker-cpu.ts      (the minimal pipeline, below)
 *   BENCH_BUS_FORMAT=1 node --import tsx bench/worker-cpu.ts        (messages in bus format 1, the event as nested JSON)
 *   BENCH_BUS_FORMAT=both node --import tsx bench/worker-cpu.ts     (passes alternate formats 1 and 2: an A/B in one machine state)
 *   BENCH_SAME_IDS=1 node --import tsx bench/worker-cpu.ts          (every pass over the same distinct ids, as bench:worker's slices
 *                                                                     after its first: personless ids the worker already knows)
 *
 * Scenarios: personless (events with $process_person_profile=false over 10,000 distinct ids),
 * persons ($set over 100,000 distinct ids), floor: the personless events through only what no
 * pipeline can skip, the bus decode and the RowBinary insert of the same rows (no team step,
 * normalize, persons or definitions; person_id a fixed uuid of the same size, no person lookup),
 * four partitions' batches inserted at once as the worker does. Full minus floor is what the
 * steps between cost per event.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { bootstrapInstance } from '@sightline/accounts';
import { topicNames, type ConsumedBatch, type EventBus } from '@sightline/bus';
import { createAnalyticsStore, insertEventValues, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { encodeIngestMessage, normalizeEvent, type IngestMessage } from '@sightline/ingestion';
import { createLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { startClickHouseFront, startPostgres } from '@sightline/local-services';
import { createBenchLauncher } from './bench-launcher';
import { floorRow } from './worker-floor';
import { createEventsConsumer } from '@sightline/worker';
import { median } from './bench-process';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 40_000);
const PASSES = Number(process.env.BENCH_PASSES ?? 5);
const BATCH = Number(process.env.BENCH_BATCH ?? 5_000);
const SCENARIO = (process.env.BENCH_SCENARIO ?? 'personless') as 'personless' | 'persons' | 'floor';
const PROFILE = process.env.BENCH_CPU_PROFILE;
/** Format 1 (the JSON message) is still read: messages written before format 2 are in topics. */
const formatOne = (m: IngestMessage) => Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(m))]);
const BUS_FORMAT = process.env.BENCH_BUS_FORMAT ?? '2';
/** The bus format of a pass's messages (the warm-up, pass -1, sees each format of an A/B). */
const formatOf = (pass: number): 1 | 2 => (BUS_FORMAT === '1' || (BUS_FORMAT === 'both' && pass % 2 !== 0) ? 1 : 2);
const HEAP_PROFILE = process.env.BENCH_HEAP_PROFILE;
const SAME_IDS = process.env.BENCH_SAME_IDS === '1';
const TOKEN = 'phc_bench_worker_key';
const logger = createLogger({ service: 'bench-worker-cpu', level: 'warn' });

function buildBatches(pass: number, format = formatOf(pass)): ConsumedBatch[] {
  const nowMs = Date.now();
  const distinctIds = SCENARIO === 'persons' ? 100_000 : 10_000;
  const batches: ConsumedBatch[] = [];
  for (let start = 0; start < EVENTS; start += BATCH) {
    const messages = [];
    for (let i = start; i < Math.min(start + BATCH, EVENTS); i++) {
      const properties =
        SCENARIO === 'persons'
          ? { $current_url: 'https://example.com/pricing', $set: { plan: i % 3 === 0 ? 'pro' : 'free', seen: i }, $lib: 'web' }
          : { $current_url: 'https://example.com/pricing', $process_person_profile: false, $lib: 'web' };
      const r = normalizeEvent(
        { event: '$pageview', distinct_id: `bench-${SAME_IDS ? 0 : pass}-${i % distinctIds}`, properties },
        { token: TOKEN, teamId: 1, nowMs: nowMs + i, sentAt: null, ip: '10.1.2.3', historicalMigration: false },
      );
      if (!r.ok) throw new Error(r.reason);
      messages.push({ key: r.key, value: format === 1 ? formatOne(r.message) : encodeIngestMessage(r.message), headers: {}, offset: String(i) });
    }
    batches.push({ topic: 'events', partition: batches.length % 4, messages });
  }
  return batches;
}

/** The floor (bench/worker-floor.ts): each message decoded from the bus and its row inserted, nothing in between. */
async function insertFloor(ch: ClickHouseClient, batch: ConsumedBatch): Promise<void> {
  await insertEventValues(ch, batch.messages, (m) => floorRow(m.value));
}

async function main() {
  const services = createBenchLauncher('worker-cpu');
  const { launcher } = services;
  const [{ postgresAdminUrl }, { clickhouseUrl }] = await Promise.all([startPostgres(launcher), startClickHouseFront(launcher)]);
  try {
    const admin = await createMetadataStore({ url: postgresAdminUrl });
    await admin.query('CREATE DATABASE bench_cpu');
    await admin.close();
    const url = new URL(postgresAdminUrl);
    url.pathname = '/bench_cpu';
    const db = await createMetadataStore({ url: url.toString() });
    await migratePostgres(db);
    await bootstrapInstance(db, { projectApiKey: TOKEN });
    const root = createAnalyticsStore({ url: clickhouseUrl, user: 'default', password: '', database: 'default' });
    await root.command({ query: 'CREATE DATABASE IF NOT EXISTS bench_cpu' });
    await root.close();
    const ch = createAnalyticsStore({ url: clickhouseUrl, user: 'default', password: '', database: 'bench_cpu' });
    await migrateClickHouse(ch);
    const bus = {
      send: async () => {
        throw new Error('no dead letters expected');
      },
    } as unknown as EventBus;
    const pipeline = createEventsConsumer({ ch, db, bus, topics: topicNames('bench.'), resolveTeam: async () => 1, metrics: createMetrics(), logger });

    const handler = SCENARIO === 'floor' ? (batch: ConsumedBatch) => insertFloor(ch, batch) : pipeline;

    let gcMs = 0;
    let scavenges = 0;
    const gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        gcMs += entry.duration;
        if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
      }
    });
    gcObserver.observe({ entryTypes: ['gc'] });

    // The bus hands the worker up to four partitions' batches at a time.
    const handle = async (batches: ConsumedBatch[]) => {
      for (let i = 0; i < batches.length; i += 4) await Promise.all(batches.slice(i, i + 4).map(handler));
    };
    await handle(buildBatches(-1, 1)); // warm-up (JIT, caches, connections)
    await handle(buildBatches(-2, 2));

    const profiler = PROFILE || HEAP_PROFILE ? new Session() : null;
    const cpuPerThousand: number[] = [];
    const gcPerThousand: number[] = [];
    const wallPerThousand: number[] = [];
    const scavengesPerHundredThousand: number[] = [];
    const cpuPerThousandOfFormat: Record<1 | 2, number[]> = { 1: [], 2: [] };
    // Built beforehand: the timed passes hold only the worker's own work.
    const passes = Array.from({ length: PASSES }, (_, pass) => buildBatches(pass));
    for (let pass = 0; pass < PASSES; pass++) {
      const batches = passes[pass]!;
      if (global.gc) global.gc();
      if (profiler && pass === 0) {
        profiler.connect();
        if (PROFILE) {
          await profiler.post('Profiler.enable');
          await profiler.post('Profiler.start');
        } else
          await profiler.post('HeapProfiler.startSampling', {
            samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
      }
      gcMs = 0;
      scavenges = 0;
      const cpu = process.cpuUsage();
      const t = performance.now();
      await handle(batches);
      const wall = performance.now() - t;
      const used = process.cpuUsage(cpu);
      // GC entries are delivered asynchronously.
      await new Promise((r) => setImmediate(r));
      cpuPerThousand.push(((used.user + used.system) / 1000 / EVENTS) * 1000);
      cpuPerThousandOfFormat[formatOf(pass)].push(cpuPerThousand.at(-1)!);
      gcPerThousand.push((gcMs / EVENTS) * 1000);
      wallPerThousand.push((wall / EVENTS) * 1000);
      scavengesPerHundredThousand.push((scavenges / EVENTS) * 100_000);
      console.log(
        `pass ${pass + 1} (format ${formatOf(pass)}): CPU ${cpuPerThousand.at(-1)!.toFixed(2)} ms per 1,000 events (GC pauses ${gcPerThousand.at(-1)!.toFixed(2)}, ${scavengesPerHundredThousand.at(-1)!.toFixed(0)} scavenges per 100,000), wall ${wallPerThousand.at(-1)!.toFixed(1)}, load ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
    if (profiler) {
      const { profile } = PROFILE ? await profiler.post('Profiler.stop') : await profiler.post('HeapProfiler.stopSampling');
      fs.writeFileSync((PROFILE ?? HEAP_PROFILE)!, JSON.stringify(profile));
    }
    gcObserver.disconnect();
    if (BUS_FORMAT === 'both')
      console.log(
        `A/B: median CPU ${median(cpuPerThousandOfFormat[1]).toFixed(2)} ms per 1,000 events in bus format 1, ${median(cpuPerThousandOfFormat[2]).toFixed(2)} in format 2`,
      );
    console.log(
      `${SCENARIO}, bus format ${BUS_FORMAT}, ${EVENTS} events × ${PASSES} passes, batches of ${BATCH}: median CPU ${median(cpuPerThousand).toFixed(2)} ms per 1,000 events (min ${Math.min(...cpuPerThousand).toFixed(2)}), GC pauses ${median(gcPerThousand).toFixed(2)}, ${median(scavengesPerHundredThousand).toFixed(0)} scavenges per 100,000 events, wall ${median(wallPerThousand).toFixed(1)}`,
    );
    await db.close();
    await ch.close();
  } finally {
    await services.stopAll(500);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
