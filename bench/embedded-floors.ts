/**
 * The floors of bench:embedded: what each piece of the embedded path costs alone, on the same
 * events (bench/embedded-events.ts), in CPU milliseconds per 1,000 events, summed against what
 * the target allows: 36,000 ev/s on 2 cores is 2,000 ms of CPU per second for 36,000 events,
 * 55.6 ms per 1,000 events for everything (the load generator included, it shares the cores).
 *
 *   (c) capture: the gateway app alone (parse, validate, normalise, answer; a bus that
 *       acknowledges at once) in its own process, and the load generator's own HTTP client;
 *   (p) prepare: the worker's check and normalise of each captured message (in-process, as the
 *       embedded bus hands them over);
 *   (b) persons: the worker's persons step on the embedded PostgreSQL (PGlite in its thread),
 *       run by run as the embedded worker does it;
 *   (a) write: the ClickHouse writes of those runs on the in-process engine (chdb): the events
 *       insert in the format the embedded path uses (JSONEachRow text), and the person copies;
 *       then the events insert alone at other batch sizes, and its fixed cost per call.
 * CPU is the whole process's (all threads: chdb's and PGlite's included), per thread where /proc
 * tells; it moves far less than wall time on a machine shared with other work.
 *
 *   npm run bench:embedded-floors   (BENCH_EVENTS, default 300,000; BENCH_USERS, default 20,000;
 *                                    BENCH_BATCH, events per run, default 2,000)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { createAnalyticsStore, insertEventValues, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { normalizeEvent, readCapturePayload, type IngestMessage } from '@sightline/ingestion';
import { GroupTypeIndexes, PersonlessDistinctIdCache, writeCopies } from '@sightline/persons';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { checkIngestMessage, normalizeStep, personsStep, toEventValues, type PersonsStepResult, type PreparedEvent } from '@sightline/worker';
import { startBenchServer } from './bench-process';
import { EMBEDDED_PROJECT_KEY, embeddedBenchBodies } from './embedded-events';
import { threadCpuSeconds, threadCpuSplit } from './thread-cpu';

const threadCpu = (pid: number) => threadCpuSeconds(pid, { mainName: 'main' });

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 300_000);
const USERS = Number(process.env['BENCH_USERS'] ?? 20_000);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 2_000);
const CONCURRENCY = 4;
/** What 36,000 ev/s on 2 cores leaves per 1,000 events. */
const BUDGET_MS_PER_1000 = (2 * 1000) / 36;

const perThousand = (cpuMicros: number, events: number) => cpuMicros / 1000 / (events / 1000);

/** The CPU of `fn` in this process (all threads), per 1,000 of `events`, with its split by thread. */
async function measured<T>(events: number, fn: () => Promise<T>): Promise<{ ms: number; wallMs: number; split: string; value: T }> {
  const threads = threadCpu(process.pid);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms: perThousand(used.user + used.system, events), wallMs, split: threadCpuSplit(threads, threadCpu(process.pid), events, 1), value };
}

async function postAll(base: string, posts: string[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < posts.length) {
        const response = await fetch(`${base}/batch/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: posts[next++]! });
        if (response.status !== 200) throw new Error(`batch answered ${response.status}: ${await response.text()}`);
        await response.text();
      }
    }),
  );
}

/** The messages the capture route hands the in-process bus for the posts (as IngestBusMessage.decoded). */
function capturedMessages(posts: string[], teamId: number): IngestMessage[] {
  const out: IngestMessage[] = [];
  for (const body of posts) {
    const payload = readCapturePayload(JSON.parse(body));
    const ctx = { token: EMBEDDED_PROJECT_KEY, teamId, nowMs: Date.now(), sentAt: payload.sentAt, ip: '127.0.0.1', historicalMigration: true };
    for (const event of payload.events) {
      const r = normalizeEvent(event, ctx);
      if (!r.ok) throw new Error(r.reason);
      out.push(r.message);
    }
  }
  return out;
}

function runsOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function insertEvents(ch: ClickHouseClient, events: readonly PreparedEvent[], enrichments: PersonsStepResult['enrichments']): Promise<void> {
  await insertEventValues(ch, events, (event, i) => toEventValues(event, enrichments[i]!));
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-floors-'));
  const line = (label: string, ms: number, extra = '') => console.log(`  ${label.padEnd(44)} ${ms.toFixed(1).padStart(6)} ms${extra ? `  (${extra})` : ''}`);
  try {
    console.log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, ${os.cpus().length} cores; ${EVENTS} events of ${USERS} users, runs of ${BATCH}; CPU ms per 1,000 events`,
    );
    const posts = embeddedBenchBodies(0, EVENTS, USERS);

    // (c) capture alone, in its own process; the load generator's client is this process.
    const gateway = await startBenchServer('gateway-only', ['--import', 'tsx', path.join(__dirname, 'gateway-server.ts'), 'gateway', 'none', 'bench.']);
    let gatewayMs: number;
    let clientMs: number;
    try {
      const base = `http://127.0.0.1:${gateway.port}`;
      await postAll(base, posts.slice(0, 20)); // warm-up
      const before = threadCpu(gateway.child.pid!);
      const client = await measured(EVENTS, () => postAll(base, posts));
      const after = threadCpu(gateway.child.pid!);
      gatewayMs = (([...after.values()].reduce((a, b) => a + b, 0) - [...before.values()].reduce((a, b) => a + b, 0)) * 1000) / (EVENTS / 1000);
      clientMs = client.ms;
      line('(c) capture: gateway app, no write', gatewayMs, `${Math.round(EVENTS / (client.wallMs / 1000))} ev/s`);
      line('    load generator (fetch client)', clientMs);
    } finally {
      gateway.child.kill('SIGTERM');
    }

    const db = await createMetadataStore({ dataDir: dir });
    const ch = createAnalyticsStore({ dataDir: dir, user: 'default', password: '', database: 'default' });
    try {
      await migratePostgres(db);
      await migrateClickHouse(ch);
      const { projectId: teamId } = await bootstrapInstance(db, { projectApiKey: EMBEDDED_PROJECT_KEY });
      const messages = capturedMessages(posts, teamId);

      // (p) the worker's check and normalise of each message.
      const prepare = await measured(EVENTS, async () =>
        messages.map((m) => {
          const ingest = checkIngestMessage(m);
          if (ingest.kind !== 'ok') throw new Error('parse');
          const event = normalizeStep(ingest.value, teamId, true);
          if (event.kind !== 'ok') throw new Error('normalize');
          return event.value;
        }),
      );
      line('(p) prepare: check + normalise', prepare.ms);
      const runs = runsOf(prepare.value, BATCH);

      // (b) persons, run after run, as one embedded partition does.
      const groupTypes = new GroupTypeIndexes(db);
      const personless = new PersonlessDistinctIdCache();
      const persons = await measured(EVENTS, async () => {
        const results: PersonsStepResult[] = [];
        for (const run of runs) results.push(await personsStep(db, groupTypes, personless, run));
        return results;
      });
      line('(b) persons step on PGlite', persons.ms, `${Math.round(EVENTS / (persons.wallMs / 1000))} ev/s; ${persons.split}`);

      // (a) the ClickHouse writes of the same runs.
      const events = await measured(EVENTS, async () => {
        for (let r = 0; r < runs.length; r++) await insertEvents(ch, runs[r]!, persons.value[r]!.enrichments);
      });
      line(`(a) events insert, chdb JSONEachRow, runs of ${BATCH}`, events.ms, `${Math.round(EVENTS / (events.wallMs / 1000))} ev/s; ${events.split}`);
      const copies = await measured(EVENTS, async () => {
        for (const result of persons.value) await writeCopies(ch, result.copies);
      });
      line('    person copies insert, chdb', copies.ms, copies.split);

      const total = gatewayMs + clientMs + prepare.ms + persons.ms + events.ms + copies.ms;
      console.log(`  ${'sum'.padEnd(44)} ${total.toFixed(1).padStart(6)} ms  (36,000 ev/s on 2 cores allows ${BUDGET_MS_PER_1000.toFixed(1)} ms)`);
      console.log(`  => at most ${Math.round((2 * 1_000_000) / total)} ev/s on 2 cores for these pieces alone, ${Math.round(1_000_000 / total)} per core`);

      // The events insert alone by run size (the same rows again), and its fixed cost per call.
      const rows = prepare.value.slice(0, Math.min(EVENTS, 100_000));
      const enrichments = persons.value.flatMap((r) => r.enrichments).slice(0, rows.length);
      console.log(`\nevents insert alone on chdb by run size (${rows.length} rows each):`);
      for (const size of [500, 1_000, 2_000, 5_000, 10_000, 20_000]) {
        const sized = await measured(rows.length, async () => {
          for (let i = 0; i < rows.length; i += size) await insertEvents(ch, rows.slice(i, i + size), enrichments.slice(i, i + size));
        });
        line(`runs of ${size}`, sized.ms, `${Math.round(rows.length / (sized.wallMs / 1000))} ev/s`);
      }
      // The copies of several runs in one call (as gathered runs would write them).
      console.log(`\nperson and distinct-id copies alone on chdb, the copies of k runs of ${BATCH} per call:`);
      for (const k of [1, 5, 10]) {
        const groups = runsOf(persons.value.slice(0, Math.min(persons.value.length, 50)), k);
        const covered = groups.reduce((n, g) => n + g.length * BATCH, 0);
        const sized = await measured(covered, async () => {
          for (const group of groups)
            await writeCopies(ch, { persons: group.flatMap((r) => r.copies.persons), distinctIds: group.flatMap((r) => r.copies.distinctIds) });
        });
        line(`k = ${k}`, sized.ms, `${Math.round(covered / (sized.wallMs / 1000))} ev/s`);
      }
      const one = await measured(1000, async () => {
        for (let i = 0; i < 20; i++) await insertEvents(ch, rows.slice(i, i + 1), enrichments.slice(i, i + 1));
      });
      console.log(`  fixed cost of one insert call (1 row): ${(one.ms / 20).toFixed(2)} ms CPU`);
    } finally {
      await ch.close();
      await db.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
