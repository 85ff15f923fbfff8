/**
 * Gateway benchmark: the gateway (Express) against a plain node:http server doing the same
 * work (JSON.parse + the same ajv validation + the same Kafka produce path), and against the
 * textbook express.json() path, all producing to the librdkafka mock cluster (kcat, 3 brokers).
 * Shapes: single-event capture (/e/) and batches of 100 events (/batch/). Each server runs in
 * its own process; the load generator (autocannon) runs here. Prints medians over RUNS runs.
 * For batches it also measures, in the same runs, a raw kafkajs producer sending the messages
 * the gateway produces for one such request (acks=-1, BENCH_CONNECTIONS sends in flight): what
 * the Kafka client alone manages on this mock (target: gateway ≥ 0.6× of it).
 *
 *   npm run bench:gateway            (BENCH_RUNS, BENCH_SECONDS, BENCH_CONNECTIONS to tune;
 *                                     BENCH_PRODUCE=none measures the HTTP layer without Kafka;
 *                                     BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles each server)
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { median, processCpuMs, startBenchServer } from './bench-process';
import { producedMessages, SHAPES, type Shape } from './gateway-messages';
import { ServiceLauncher, startKafkaMock } from '@sightline/local-services';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 32);
/** Node flags for each server, e.g. --cpu-prof (gateway-server.ts exits through process.exit, so profiles get written). */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const ALL_MODES = ['baseline', 'gateway', 'express-default'] as const;
type Mode = (typeof ALL_MODES)[number];
/** BENCH_MODES=gateway (comma list) runs only those servers, e.g. to profile one; the first listed is the ratio's base. */
const MODES: readonly Mode[] = process.env['BENCH_MODES'] ? (process.env['BENCH_MODES'].split(',') as Mode[]) : ALL_MODES;
/** BENCH_SHAPES=batch100 (comma list) runs only those request shapes. */
/**
 * BENCH_RAW_IN_FLIGHT=1: the raw producer keeps one request in flight per broker, as the bus does
 * to keep key order through retries (kafkajs's default, used otherwise, has no limit).
 */
const RAW_IN_FLIGHT = process.env['BENCH_RAW_IN_FLIGHT'] ? Number(process.env['BENCH_RAW_IN_FLIGHT']) : undefined;
const SHAPE_LIST = (process.env['BENCH_SHAPES']?.split(',') ?? Object.keys(SHAPES)) as Shape[];

async function startServer(mode: Mode, brokers: string): Promise<{ child: ChildProcess; port: number }> {
  return startBenchServer(mode, [...NODE_ARGS, '--import', 'tsx', path.join(__dirname, 'gateway-server.ts'), mode, brokers, `bench${Date.now()}.`]);
}

interface Measured {
  eventsPerSec: number;
  /** The server process's CPU per event (µs), far less sensitive to the machine's load than the rate. */
  cpuUsPerEvent?: number;
  /** The load generator's (this process's) CPU per event (µs): it shares the machine with the server. */
  loadCpuUsPerEvent?: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(port: number, shape: Shape, seconds: number, pid?: number): Promise<Measured> {
  const { path: urlPath, body, events } = SHAPES[shape];
  const cpuBefore = pid === undefined ? 0 : processCpuMs(pid);
  const loadCpuBefore = process.cpuUsage();
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${urlPath}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  const served = result.requests.total * events;
  const loadCpu = process.cpuUsage(loadCpuBefore);
  return {
    loadCpuUsPerEvent: served === 0 ? undefined : (loadCpu.user + loadCpu.system) / served,
    eventsPerSec: result.requests.average * events,
    cpuUsPerEvent: pid === undefined || served === 0 ? undefined : ((processCpuMs(pid) - cpuBefore) * 1000) / served,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/** Raw kafkajs: BENCH_CONNECTIONS loops each sending one request's messages (acks=-1) again and again; events/s. */
async function rawProduce(brokers: string, shape: Shape, seconds: number): Promise<Measured> {
  const kafka = new Kafka({ clientId: 'bench-raw', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true, maxInFlightRequests: RAW_IN_FLIGHT });
  await producer.connect();
  const topic = `bench-raw-${Date.now()}.events`;
  const messages = producedMessages(shape);
  await producer.send({ topic, acks: -1, messages }); // topic creation
  let sent = 0;
  const latencies: number[] = [];
  // Nothing else runs in this process meanwhile: its CPU is the Kafka client's alone.
  const cpuBefore = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const t = performance.now();
          await producer.send({ topic, acks: -1, messages });
          latencies.push(performance.now() - t);
          sent += messages.length;
        }
      }),
    );
  } finally {
    await producer.disconnect();
  }
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? 0);
  return { eventsPerSec: sent / seconds, cpuUsPerEvent: (cpu.user + cpu.system) / sent, p50: at(0.5), p99: at(0.99), errors: 0 };
}

async function main() {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-'));
  const launcher = new ServiceLauncher(tempDir);
  const stopAll: (() => void)[] = [() => launcher.started.forEach((s) => s.child.kill('SIGKILL'))];
  try {
    // BENCH_PRODUCE=none: no Kafka, the bus acknowledges at once (the HTTP layer's cost alone).
    const brokers = process.env['BENCH_PRODUCE'] === 'none' ? 'none' : (await startKafkaMock(launcher)).kafkaBrokers.join(',');
    const servers = {} as Record<Mode, number>;
    const pids = {} as Record<Mode, number | undefined>;
    for (const mode of MODES) {
      const { child, port } = await startServer(mode, brokers);
      stopAll.push(() => child.kill('SIGTERM'));
      servers[mode] = port;
      pids[mode] = child.pid;
    }
    console.log(`gateway bench: ${RUNS} runs × ${SECONDS}s, ${CONNECTIONS} connections, ${os.cpus().length} CPUs, node ${process.version}`);
    for (const shape of SHAPE_LIST) {
      // Warm-up: JIT, Kafka connections and topic creation.
      for (const mode of MODES) await load(servers[mode], shape, 2);
      const runs = Object.fromEntries(MODES.map((mode) => [mode, [] as Measured[]])) as Record<Mode, Measured[]>;
      const raw: Measured[] = [];
      const withRaw = shape === 'batch100' && brokers !== 'none' && MODES.includes('gateway');
      for (let run = 0; run < RUNS; run++) {
        // Interleaved so drift in machine load hits every mode alike.
        for (const mode of MODES) runs[mode].push(await load(servers[mode], shape, SECONDS, pids[mode]));
        if (withRaw) raw.push(await rawProduce(brokers, shape, SECONDS));
      }
      const base = median(runs[MODES[0]!].map((r) => r.eventsPerSec));
      console.log(`\n${shape} (${SHAPES[shape].events} event(s)/request, ${SHAPES[shape].body.length} bytes)`);
      for (const mode of MODES) {
        const eps = median(runs[mode].map((r) => r.eventsPerSec));
        const p50 = median(runs[mode].map((r) => r.p50));
        const p99 = median(runs[mode].map((r) => r.p99));
        const errors = runs[mode].reduce((n, r) => n + r.errors, 0);
        const all = runs[mode].map((r) => Math.round(r.eventsPerSec)).join(', ');
        const cpu = median(runs[mode].map((r) => r.cpuUsPerEvent ?? 0));
        const loadCpu = median(runs[mode].map((r) => r.loadCpuUsPerEvent ?? 0));
        // Under 100 %, the server waited on something other than its own CPU (the bus, the load generator).
        const busy = median(runs[mode].map((r) => ((r.cpuUsPerEvent ?? 0) * r.eventsPerSec) / 1e4));
        console.log(
          `  ${mode.padEnd(16)} ${Math.round(eps).toString().padStart(8)} events/s  p50 ${p50} ms  p99 ${p99} ms  ratio ${(eps / base).toFixed(2)}  errors ${errors}  server CPU ${cpu.toFixed(1)} µs/event (busy ${busy.toFixed(0)} % of a core)  load generator ${loadCpu.toFixed(1)} µs/event  (runs: ${all})`,
        );
      }
      if (withRaw) {
        const rawEps = median(raw.map((r) => r.eventsPerSec));
        const perRun = runs.gateway.map((g, i) => g.eventsPerSec / raw[i]!.eventsPerSec);
        console.log(
          `  ${(RAW_IN_FLIGHT === undefined ? 'raw kafkajs' : `raw, ${RAW_IN_FLIGHT} in flight`).padEnd(16)} ${Math.round(rawEps).toString().padStart(8)} events/s  p50 ${median(raw.map((r) => r.p50))} ms  p99 ${median(raw.map((r) => r.p99))} ms  client CPU ${median(raw.map((r) => r.cpuUsPerEvent ?? 0)).toFixed(1)} µs/event  (runs: ${raw.map((r) => Math.round(r.eventsPerSec)).join(', ')})`,
        );
        console.log(
          `  gateway / raw kafkajs (median of per-run ratios): ${median(perRun).toFixed(2)}  (runs: ${perRun.map((r) => r.toFixed(2)).join(', ')}; target ≥ 0.6)`,
        );
      }
    }
  } finally {
    for (const stop of stopAll.reverse()) stop();
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
