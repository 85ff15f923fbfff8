/**
 * Import benchmark: `sightline import` (a child process, as a user runs it) against a plain
 * loop posting the same prebuilt /batch/ bodies with the same concurrency, both into the
 * embedded service (`npm start`) started here. Each run imports a freshly generated JSONL file
 * (its own uuids). Prints the median events/s of each and their ratio (target ≥ 0.8).
 *
 *   npm run bench:import                 (BENCH_EVENTS, default 1,000,000; BENCH_RUNS, default 3)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedSightline, stopStartedProcesses } from '@sightline/testkit';
import { median } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 1_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const CONCURRENCY = 4;
const MAX_RETRIES = 20;
const BATCH_BYTES = 5 * 1024 * 1024;
const PROJECT_KEY = 'phc_bench_import_project_key';
const PERSONAL_KEY = 'phx_bench_import_personal_key';
const ROOT = path.resolve(__dirname, '..');

function eventLine(run: number, i: number): string {
  return JSON.stringify({
    event: i % 5 === 0 ? '$identify' : '$pageview',
    distinct_id: `run${run}-user-${i % 20_000}`,
    timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    uuid: `00000000-0000-4000-8${String(run).padStart(3, '0')}-${i.toString(16).padStart(12, '0')}`,
    properties: { $current_url: 'https://example.com/pricing', $browser: 'Chrome', plan: i % 3 ? 'pro' : 'free', n: i, $set: { plan: 'pro' } },
  });
}

/** Writes the run's file in chunks (a million lines never sit in memory as one string). */
function generate(file: string, run: number): void {
  const fd = fs.openSync(file, 'w');
  for (let start = 0; start < EVENTS; start += 10_000) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(EVENTS, start + 10_000); i++) lines.push(eventLine(run, i));
    fs.writeSync(fd, `${lines.join('\n')}\n`);
  }
  fs.closeSync(fd);
}

async function runCommand(file: string, base: string): Promise<number> {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'apps/cli/src/main.ts',
      'import',
      file,
      '--host',
      base,
      '--api-key',
      PROJECT_KEY,
      '--concurrency',
      String(CONCURRENCY),
      '--batch-bytes',
      String(BATCH_BYTES),
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`sightline import exited with ${code}`);
  return EVENTS / ((Date.now() - started) / 1000);
}

/** The same events, batched the same way, posted by a bare loop: the baseline. */
async function runPlainLoop(file: string, base: string): Promise<number> {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const bodies: string[] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    if (bytes + line.length + 1 > BATCH_BYTES - 256 || batch.length >= 10_000) {
      bodies.push(`{"api_key":"${PROJECT_KEY}","historical_migration":true,"batch":[${batch.join(',')}]}`);
      batch = [];
      bytes = 0;
    }
    batch.push(line);
    bytes += line.length + 1;
  }
  if (batch.length > 0) bodies.push(`{"api_key":"${PROJECT_KEY}","historical_migration":true,"batch":[${batch.join(',')}]}`);
  const started = Date.now();
  let next = 0;
  let retries = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        // As any migration script must: a busy service answers 503 (or 429) and the batch is
        // sent again after Retry-After, or a short backoff.
        for (let attempt = 0; ; attempt++) {
          const response = await fetch(`${base}/batch/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
          await response.text();
          if (response.ok) break;
          if (![429, 503].includes(response.status) || attempt >= MAX_RETRIES) throw new Error(`baseline batch answered ${response.status}`);
          retries++;
          const retryAfterMs = Number(response.headers.get('retry-after')) * 1000;
          await new Promise((resolve) => setTimeout(resolve, retryAfterMs > 0 ? retryAfterMs : Math.min(5_000, 250 * 2 ** attempt)));
        }
      }
    }),
  );
  const rate = EVENTS / ((Date.now() - started) / 1000);
  if (retries > 0) console.log(`  (the plain loop sent ${retries} batches again after 503/429)`);
  return rate;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-import-'));
  try {
    const service = await startEmbeddedSightline({ dataDir: path.join(dir, 'data'), projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY });
    console.log(`import benchmark: ${EVENTS} events per run, ${RUNS} runs, concurrency ${CONCURRENCY}, embedded service on ${service.base}`);
    const command: number[] = [];
    const baseline: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      // Alternating which goes first keeps the service's warm-up from favouring one side.
      for (const side of run % 2 === 0 ? (['baseline', 'command'] as const) : (['command', 'baseline'] as const)) {
        const file = path.join(dir, `run${run}-${side}.jsonl`);
        generate(file, run * 2 + (side === 'command' ? 1 : 0));
        const rate = side === 'command' ? await runCommand(file, service.base) : await runPlainLoop(file, service.base);
        (side === 'command' ? command : baseline).push(rate);
        console.log(`  run ${run + 1}  ${side.padEnd(8)}  ${Math.round(rate)} events/s`);
        fs.rmSync(file);
      }
    }
    const ratio = median(command) / median(baseline);
    console.log(`\nmedian: sightline import ${Math.round(median(command))} events/s, plain loop ${Math.round(median(baseline))} events/s`);
    console.log(`ratio: ${ratio.toFixed(2)} (target ≥ 0.8: ${ratio >= 0.8 ? 'met' : 'NOT met'})`);
  } finally {
    await stopStartedProcesses();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
