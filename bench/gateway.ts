/**
 * Gateway benchmark: the gateway (Express) against a plain node:http server doing the same
 * work (JSON.parse + the same ajv validation + the same Kafka produce path), and against the
 * textbook express.json() path, all producing to the librdkafka mock cluster (kcat, 3 brokers).
 * Shapes: single-event capture (/e/) and batches of 100 events (/batch/). Each server runs in
 * its own process; the load generator (autocannon) runs here. Prints medians over RUNS runs.
 *
 *   npm run bench:gateway            (BENCH_RUNS, BENCH_SECONDS, BENCH_CONNECTIONS to tune;
 *                                     BENCH_PRODUCE=none measures the HTTP layer without Kafka)
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { median, startBenchServer } from './bench-process';
import { ServiceLauncher, startKafkaMock } from '../tools/testkit/src/start-services';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 32);
const MODES = ['baseline', 'gateway', 'express-default'] as const;
type Mode = (typeof MODES)[number];
const TOKEN = 'phc_bench_token_0001';

const event = (i: number) => ({
  event: '$pageview',
  distinct_id: `user-${i % 1000}`,
  timestamp: new Date().toISOString(),
  properties: { $current_url: 'https://example.com/pricing', $browser: 'Chrome', $os: 'Mac OS X', plan: 'pro', n: i },
});
const SHAPES = {
  single: { path: '/e/', body: JSON.stringify({ api_key: TOKEN, ...event(1) }), events: 1 },
  batch100: { path: '/batch/', body: JSON.stringify({ api_key: TOKEN, batch: Array.from({ length: 100 }, (_, i) => event(i)) }), events: 100 },
};
type Shape = keyof typeof SHAPES;

async function startServer(mode: Mode, brokers: string): Promise<{ child: ChildProcess; port: number }> {
  return startBenchServer(mode, ['--import', 'tsx', path.join(__dirname, 'gateway-server.ts'), mode, brokers, `bench${Date.now()}.`]);
}

interface Measured {
  eventsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(port: number, shape: Shape, seconds: number): Promise<Measured> {
  const { path: urlPath, body, events } = SHAPES[shape];
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${urlPath}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  return {
    eventsPerSec: result.requests.average * events,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

async function main() {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-'));
  const launcher = new ServiceLauncher(tempDir);
  const stopAll: (() => void)[] = [() => launcher.started.forEach((s) => s.child.kill('SIGKILL'))];
  try {
    // BENCH_PRODUCE=none: no Kafka, the bus acknowledges at once (the HTTP layer's cost alone).
    const brokers = process.env['BENCH_PRODUCE'] === 'none' ? 'none' : (await startKafkaMock(launcher)).kafkaBrokers.join(',');
    const servers = {} as Record<Mode, number>;
    for (const mode of MODES) {
      const { child, port } = await startServer(mode, brokers);
      stopAll.push(() => child.kill('SIGTERM'));
      servers[mode] = port;
    }
    console.log(`gateway bench: ${RUNS} runs × ${SECONDS}s, ${CONNECTIONS} connections, ${os.cpus().length} CPUs, node ${process.version}`);
    for (const shape of Object.keys(SHAPES) as Shape[]) {
      // Warm-up: JIT, Kafka connections and topic creation.
      for (const mode of MODES) await load(servers[mode], shape, 2);
      const runs: Record<Mode, Measured[]> = { baseline: [], gateway: [], 'express-default': [] };
      for (let run = 0; run < RUNS; run++) {
        // Interleaved so drift in machine load hits every mode alike.
        for (const mode of MODES) runs[mode].push(await load(servers[mode], shape, SECONDS));
      }
      const base = median(runs.baseline.map((r) => r.eventsPerSec));
      console.log(`\n${shape} (${SHAPES[shape].events} event(s)/request, ${SHAPES[shape].body.length} bytes)`);
      for (const mode of MODES) {
        const eps = median(runs[mode].map((r) => r.eventsPerSec));
        const p50 = median(runs[mode].map((r) => r.p50));
        const p99 = median(runs[mode].map((r) => r.p99));
        const errors = runs[mode].reduce((n, r) => n + r.errors, 0);
        const all = runs[mode].map((r) => Math.round(r.eventsPerSec)).join(', ');
        console.log(
          `  ${mode.padEnd(16)} ${Math.round(eps).toString().padStart(8)} events/s  p50 ${p50} ms  p99 ${p99} ms  ratio ${(eps / base).toFixed(2)}  errors ${errors}  (runs: ${all})`,
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
