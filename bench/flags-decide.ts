/**
 * Decide benchmark: POST /flags/?v=2 on the api (Express, body decoding, one Postgres round
 * trip per request for the stored person, cohorts and hash keys, plus groups, then the
 * engine) against the bare ceiling measured in the same run: plain node:http + the engine
 * on the same 50 flag definitions with persons and groups in memory. Postgres is a real
 * server started for the run (as the tests do). Each server runs in its own process; the
 * load generator (autocannon) runs here. Prints medians over BENCH_RUNS runs of:
 *   - saturation: req/s, p50 and p99 with BENCH_CONNECTIONS connections
 *   - the target load: p50 and p99 at BENCH_RATE req/s (default 2,000), and at half the
 *     ceiling's saturation rate of the same run (target: api p99 ≤ 10 ms)
 * The api server caches stored persons for FLAGS_PERSON_CACHE_MS (default 1 s; 0: off).
 *
 *   npm run bench:flags      (BENCH_RUNS, BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_RATE to tune)
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { median, startBenchServer } from './bench-process';
import { Client } from 'pg';
import { bootstrapInstance } from '@sightline/accounts';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { ServiceLauncher, startPostgres } from '../tools/testkit/src/start-services';
import { decideRequestBody, PERSONS, seedDecideBenchmark } from './flags-fixtures';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 32);
const RATE = Number(process.env['BENCH_RATE'] ?? 2000);
const TOKEN = 'phc_bench_flags_token_01';
/** e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the servers. */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const MODES = ['ceiling', 'api', 'api-uncached'] as const;
type Mode = (typeof MODES)[number];

async function startServer(mode: Mode, databaseUrl: string, teamId: number): Promise<{ child: ChildProcess; port: number }> {
  return startBenchServer(mode, [...NODE_ARGS, '--import', 'tsx', path.join(__dirname, 'flags-decide-server.ts'), mode, databaseUrl, String(teamId)]);
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

let requestCounter = 0;
async function load(port: number, seconds: number, rate?: number): Promise<Measured> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    ...(rate ? { overallRate: rate } : {}),
    requests: [
      {
        method: 'POST',
        path: '/flags/?v=2',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.142' },
        setupRequest: (req) => ({ ...req, body: decideRequestBody(TOKEN, requestCounter++) }),
      },
    ],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx };
}

async function main() {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-flags-'));
  fs.chmodSync(tempDir, 0o755); // PostgreSQL runs as its own OS user and must reach its data dir
  const launcher = new ServiceLauncher(tempDir);
  const stopAll: (() => void)[] = [() => launcher.started.forEach((s) => s.child.kill('SIGKILL'))];
  try {
    const { postgresAdminUrl } = await startPostgres(launcher);
    const admin = new Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE bench_flags');
    await admin.end();
    const databaseUrl = postgresAdminUrl.replace(/\/postgres$/, '/bench_flags');
    const db = await createMetadataStore({ url: databaseUrl });
    await migratePostgres(db);
    const { projectId } = await bootstrapInstance(db, { projectApiKey: TOKEN });
    const seeding = Date.now();
    await seedDecideBenchmark(db, projectId);
    await db.query('ANALYZE');
    await db.close();
    console.log(`seeded 50 flags and ${PERSONS} persons in ${Date.now() - seeding} ms`);

    const servers = {} as Record<Mode, number>;
    for (const mode of MODES) {
      const { child, port } = await startServer(mode, databaseUrl, projectId);
      stopAll.push(() => child.kill('SIGTERM'));
      servers[mode] = port;
    }
    const sample = await fetch(`http://127.0.0.1:${servers.api}/flags/?v=2`, { method: 'POST', body: decideRequestBody(TOKEN, 1) });
    const sampleBody = (await sample.json()) as { flags?: Record<string, unknown>; errorsWhileComputingFlags?: boolean };
    if (sample.status !== 200 || Object.keys(sampleBody.flags ?? {}).length !== 50 || sampleBody.errorsWhileComputingFlags !== false) {
      throw new Error(`unexpected decide answer ${sample.status}: ${JSON.stringify(sampleBody).slice(0, 300)}`);
    }
    console.log(
      `decide bench: 50 flags, ${RUNS} runs × ${SECONDS}s, ${CONNECTIONS} connections, target ${RATE} req/s, ${os.cpus().length} CPUs, node ${process.version}`,
    );
    for (const mode of MODES) await load(servers[mode], 2); // warm-up: JIT, pools, caches
    const saturation: Record<Mode, Measured[]> = { ceiling: [], api: [], 'api-uncached': [] };
    const atRate: Record<Mode, Measured[]> = { ceiling: [], api: [], 'api-uncached': [] };
    const uncachedRatios: number[] = [];
    const atHalfCeiling: Measured[] = [];
    const halfRates: number[] = [];
    const ratios: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      // Interleaved so drift in machine load hits both alike.
      for (const mode of MODES) saturation[mode].push(await load(servers[mode], SECONDS));
      ratios.push(saturation.api[run]!.rps / saturation.ceiling[run]!.rps);
      uncachedRatios.push(saturation['api-uncached'][run]!.rps / saturation.ceiling[run]!.rps);
      for (const mode of MODES) atRate[mode].push(await load(servers[mode], SECONDS, RATE));
      halfRates.push(Math.round(saturation.ceiling[run]!.rps / 2));
      atHalfCeiling.push(await load(servers.api, SECONDS, halfRates[run]));
    }
    const line = (label: string, runs: Measured[]) =>
      `  ${label.padEnd(22)} ${Math.round(median(runs.map((r) => r.rps)))
        .toString()
        .padStart(
          7,
        )} req/s  p50 ${median(runs.map((r) => r.p50))} ms  p99 ${median(runs.map((r) => r.p99))} ms  errors ${runs.reduce((n, r) => n + r.errors, 0)}  (runs: ${runs
        .map((r) => Math.round(r.rps))
        .join(', ')})`;
    console.log('\nsaturation');
    for (const mode of MODES) console.log(line(mode, saturation[mode]));
    console.log(`  api / ceiling (median of per-run ratios): ${median(ratios).toFixed(2)}  (runs: ${ratios.map((r) => r.toFixed(2)).join(', ')})`);
    console.log(
      `  api-uncached / ceiling (median of per-run ratios): ${median(uncachedRatios).toFixed(2)}  (runs: ${uncachedRatios.map((r) => r.toFixed(2)).join(', ')})`,
    );
    console.log(`\nat ${RATE} req/s`);
    for (const mode of MODES) console.log(line(mode, atRate[mode]));
    console.log(`\nat half the ceiling's rate (runs: ${halfRates.join(', ')} req/s)`);
    console.log(line('api', atHalfCeiling));
    const halfP99 = median(atHalfCeiling.map((r) => r.p99));
    console.log(
      `\ntargets: api p99 ≤ 10 ms at half the ceiling's rate: ${halfP99 <= 10 ? 'met' : 'NOT met'} (${halfP99} ms); ≥ 0.7 × ceiling: ${median(ratios) >= 0.7 ? 'met' : 'NOT met'}`,
    );
  } finally {
    for (const stop of stopAll.reverse()) stop();
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
