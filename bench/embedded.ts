/**
 * Embedded end-to-end benchmark, tried as a new user would: `npm start` on an empty data
 * directory, then historical `/batch/` posts with persons (`$set` on every event, `$identify`
 * on every fifth; BENCH_USERS distinct ids, BENCH_EVENTS events per run), 4 at a time.
 * For each run it measures, on the same requests:
 *   - the gateway-only accept rate: the gateway app (bench/gateway-server.ts) with a bus that
 *     acknowledges at once, in its own process: what accepting the requests costs;
 *   - the end-to-end rate of the embedded service: in embedded mode a 200 means written (the
 *     in-process bus resolves a send once the worker wrote it), so the rate until the last
 *     post is answered and every event is counted in worker_events_written_total;
 * and prints medians of BENCH_RUNS runs and their ratio (end to end / gateway-only), plus the
 * worker's time per step over all runs (worker_pipeline_step_duration_seconds).
 *
 *   npm run bench:embedded     (BENCH_EVENTS, default 500,000; BENCH_USERS, default 20,000; BENCH_RUNS, default 3;
 *                               BENCH_NODE_OPTIONS for the service, e.g. --cpu-prof)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedSightline, stopStartedProcesses } from '@sightline/testkit';
import { median, startBenchServer } from './bench-process';
import { EMBEDDED_PROJECT_KEY, EVENTS_PER_POST, embeddedBenchBodies } from './embedded-events';
import { threadCpuSeconds, threadCpuSplit } from './thread-cpu';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 500_000);
const USERS = Number(process.env['BENCH_USERS'] ?? 20_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const CONCURRENCY = 4;
const PROJECT_KEY = EMBEDDED_PROJECT_KEY;
const PERSONAL_KEY = 'phx_bench_embedded_personal_key';
const bodies = (run: number) => embeddedBenchBodies(run, EVENTS, USERS);

async function metricsText(base: string): Promise<string> {
  return (await fetch(`${base}/metrics`)).text();
}

function sumOf(metrics: string, name: string, filter = ''): number {
  let total = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) if (line.includes(filter)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function postAll(base: string, posts: string[]): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < posts.length) {
        const body = posts[next++]!;
        const response = await fetch(`${base}/batch/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
        if (response.status !== 200) throw new Error(`batch answered ${response.status}: ${await response.text()}`);
        await response.text();
      }
    }),
  );
  return performance.now() - started;
}

interface RunResult {
  gatewayOnly: number;
  endToEnd: number;
  /** CPU seconds the service used (all its threads) per 1,000 events: what a loaded machine changes least. */
  cpuMsPerKiloEvent: number;
  /** The same per thread name (ms per 1,000 events). */
  threadSplit: string;
}

async function oneRun(embedded: string, pid: number | undefined, gatewayOnly: string, run: number): Promise<RunResult> {
  const posts = bodies(run);
  const gatewayMs = await postAll(gatewayOnly, posts);
  const before = await metricsText(embedded);
  const writtenBefore = sumOf(before, 'worker_events_written_total');
  const cpuBefore = sumOf(before, 'process_cpu_seconds_total');
  const threadsBefore = threadCpuSeconds(pid, { mainName: 'serving', nodeThreadsApart: true });
  const started = performance.now();
  await postAll(embedded, posts);
  for (;;) {
    const written = sumOf(await metricsText(embedded), 'worker_events_written_total') - writtenBefore;
    if (written >= EVENTS) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const doneMs = performance.now() - started;
  const cpuSeconds = sumOf(await metricsText(embedded), 'process_cpu_seconds_total') - cpuBefore;
  return {
    gatewayOnly: EVENTS / (gatewayMs / 1000),
    endToEnd: EVENTS / (doneMs / 1000),
    cpuMsPerKiloEvent: (cpuSeconds * 1000) / (EVENTS / 1000),
    threadSplit: threadCpuSplit(threadsBefore, threadCpuSeconds(pid, { mainName: 'serving', nodeThreadsApart: true }), EVENTS, 0),
  };
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-embedded-'));
  try {
    console.log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, ${os.cpus().length} cores`,
    );
    // e.g. BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the service.
    const nodeOptions = process.env['BENCH_NODE_OPTIONS'];
    const service = await startEmbeddedSightline({
      dataDir: path.join(dir, 'data'),
      projectApiKey: PROJECT_KEY,
      personalApiKey: PERSONAL_KEY,
      // A throughput bench: on a loaded machine four posts of 1,000 events, each answered once
      // written, can outlast the default 5 s bus acknowledgement and end the run with a 503.
      env: { BUS_SEND_TIMEOUT_MS: '120000' },
      // As node flags before the script: NODE_OPTIONS does not take --cpu-prof.
      nodeArgs: nodeOptions ? nodeOptions.split(/\s+/).filter(Boolean) : [],
    });
    console.log(`embedded benchmark: ${EVENTS} events of ${USERS} users per run (historical /batch/, ${EVENTS_PER_POST} per post, ${CONCURRENCY} at a time)`);
    const gateway = await startBenchServer('gateway-only', ['--import', 'tsx', path.join(__dirname, 'gateway-server.ts'), 'gateway', 'none', 'bench.']);
    const runs: RunResult[] = [];
    try {
      process.once('exit', (code) => {
        // A failed post: what the service logged above info level says why.
        if (code !== 0)
          console.error(
            service.app
              .output()
              .split('\n')
              .filter((l) => /"level":(40|50|60)/.test(l))
              .slice(-10)
              .join('\n'),
          );
      });
      for (let run = 0; run < RUNS; run++) {
        runs.push(await oneRun(service.base, service.app.proc.pid, `http://127.0.0.1:${gateway.port}`, run));
        const r = runs[run]!;
        console.log(
          `  run ${run + 1}: gateway-only ${Math.round(r.gatewayOnly)} ev/s, embedded end to end ${Math.round(r.endToEnd)} ev/s, ratio ${(r.endToEnd / r.gatewayOnly).toFixed(2)}, service CPU ${r.cpuMsPerKiloEvent.toFixed(0)} ms per 1,000 events`,
        );
        if (r.threadSplit) console.log(`    per thread (ms per 1,000 events): ${r.threadSplit}`);
      }
    } finally {
      gateway.child.kill('SIGTERM');
    }
    const metrics = await metricsText(service.base);
    const steps = ['prepare', 'persons', 'write', 'definitions'].map((step) => {
      const seconds = sumOf(metrics, 'worker_pipeline_step_duration_seconds_sum', `step="${step}"`);
      return `${step} ${seconds.toFixed(1)} s`;
    });
    const ratios = runs.map((r) => r.endToEnd / r.gatewayOnly);
    console.log(
      `\nmedians of ${RUNS} runs: gateway-only ${Math.round(median(runs.map((r) => r.gatewayOnly)))} ev/s, embedded end to end ${Math.round(median(runs.map((r) => r.endToEnd)))} ev/s`,
    );
    console.log(`end to end / gateway-only (median of per-run ratios): ${median(ratios).toFixed(2)}`);
    console.log(`service CPU per 1,000 events (all threads, median): ${median(runs.map((r) => r.cpuMsPerKiloEvent)).toFixed(0)} ms`);
    console.log(`worker time per step, all runs: ${steps.join(', ')}`);
    // Each write is one ClickHouse insert per table, whatever its size (gathered runs share one).
    const workerRuns = sumOf(metrics, 'worker_pipeline_step_duration_seconds_count', 'step="write"');
    console.log(`worker writes: ${workerRuns}, ${Math.round((EVENTS * RUNS) / workerRuns)} events per write on average`);
  } finally {
    await stopStartedProcesses();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
