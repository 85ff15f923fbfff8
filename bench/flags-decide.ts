/**
 * Decide benchmark: POST /flags/?v=2 on the api (body decoding, one Postgres round trip per
 * request for the stored person, cohorts and hash keys, plus groups, then the engine) against
 * the bare ceiling measured in the same run: plain node:http + the engine on the same 50 flag
 * definitions with persons and groups in memory. Postgres is a real server started for the run
 * (as the tests do). A fourth server is `npm start` in embedded mode (the all-in-one app on
 * PGlite and chdb, worker included) on a data directory seeded with the same project. Each
 * server runs in its own process; the load generators run here. Prints medians over BENCH_RUNS
 * runs of:
 *   - saturation: req/s, p50 and p99 with BENCH_CONNECTIONS connections (autocannon, closed loop)
 *   - the target load: p50 and p99 at BENCH_RATE req/s (default 2,000), and at half the
 *     ceiling's saturation rate of the same run (targets: api and embedded ≥ 0.8 × the ceiling's
 *     saturation rate, and their p99 there ≤ 1.5 × the ceiling's own p99 at that rate), offered
 *     at an even rate and timed from each request's due moment (open-loop-load.ts); the ceiling
 *     is measured at that rate too, as the floor this machine and load generator allow. Each
 *     fixed rate first runs BENCH_WARM_UP_SECONDS (default 2) unmeasured, since a server idles while
 *     the others are measured; the p99 of that warm-up's first second is printed apart (cold)
 * The api and embedded servers cache stored persons for FLAGS_PERSON_CACHE_MS (default 10 s; 0: off).
 * What the ceiling is and is not: it evaluates every request and holds every person in memory,
 * but skips the project key lookup, the body's depth check, CORS, metrics and request ids. The
 * api and embedded servers answer a never-seen distinct id from the project's list of ids and
 * reuse a stored person's evaluation while its inputs are unchanged (docs/flags-service.md), which
 * the ceiling does not: it bounds the engine's work per request, not theirs.
 *
 *   npm run bench:flags      (BENCH_RUNS, BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_RATE, BENCH_WARM_UP_SECONDS to tune)
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { median, startBenchServer } from './bench-process';
import { openLoopLoad } from './open-loop-load';
import { Client } from 'pg';
import { bootstrapInstance } from '@sightline/accounts';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { startEmbeddedSightline, type EmbeddedSightline } from '@sightline/testkit';
import { ServiceLauncher, startPostgres } from '@sightline/local-services';
import { decideRequestBody, PERSONS, seedDecideBenchmark } from './flags-fixtures';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 32);
const RATE = Number(process.env['BENCH_RATE'] ?? 2000);
/** Seconds each fixed-rate measurement first runs unmeasured (see offer). */
const WARM_UP_SECONDS = Number(process.env['BENCH_WARM_UP_SECONDS'] ?? 2);
const TOKEN = 'phc_bench_flags_token_01';
/** e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the servers. */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const PERSONAL_KEY = 'phx_bench_flags_personal_key_01';
const MODES = ['ceiling', 'api', 'api-uncached', 'embedded'] as const;
type Mode = (typeof MODES)[number];
/** Targets: saturation rate against the ceiling's, and p99 at half its rate against the ceiling's own p99 there. */
const RATIO_TO_CEILING = 0.8;
const P99_TO_CEILING = 1.5;
/** The modes whose ratio to the ceiling and p99 at half its rate are the targets. */
const TARGETED = ['api', 'embedded'] as const;
/** Measured at half the ceiling's saturation rate: the targeted modes and the ceiling itself. */
const AT_HALF_CEILING = ['ceiling', ...TARGETED] as const;

async function startServer(mode: Exclude<Mode, 'embedded'>, databaseUrl: string, teamId: number): Promise<{ child: ChildProcess; port: number }> {
  return startBenchServer(mode, [...NODE_ARGS, '--import', 'tsx', path.join(__dirname, 'flags-decide-server.ts'), mode, databaseUrl, String(teamId)]);
}

/** `npm start` on a data directory whose PGlite already holds the benchmark's project. */
async function startEmbedded(dataDir: string): Promise<EmbeddedSightline> {
  const db = await createMetadataStore({ dataDir });
  await migratePostgres(db);
  const { projectId } = await bootstrapInstance(db, { projectApiKey: TOKEN, personalApiKey: PERSONAL_KEY });
  await seedDecideBenchmark(db, projectId);
  await db.query('ANALYZE');
  await db.close();
  return startEmbeddedSightline({
    dataDir,
    projectApiKey: TOKEN,
    personalApiKey: PERSONAL_KEY,
    nodeArgs: NODE_ARGS,
    npmStart: true, // as the service starts (its node flags included)
  });
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  /** Fixed rates only: p99 of the warm-up's first second, right after the other servers' turns (caches expired). */
  coldP99?: number;
  errors: number;
}

let requestCounter = 0;
const DECIDE_HEADERS = { 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.142' };

/** Saturation: autocannon's closed loop, CONNECTIONS requests always in flight. */
async function saturate(port: number, seconds: number): Promise<Measured> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      { method: 'POST', path: '/flags/?v=2', headers: DECIDE_HEADERS, setupRequest: (req) => ({ ...req, body: decideRequestBody(TOKEN, requestCounter++) }) },
    ],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx };
}

/**
 * A fixed offered rate: evenly spaced requests, each timed from when it was due (open-loop-load.ts
 * says why not autocannon). Each server waits idle while the others are measured, long enough for
 * its cached persons to expire, so the same load first runs WARM_UP_SECONDS unmeasured: the figures
 * are the server's steady state at that rate; the warm-up's first second is reported apart (cold).
 */
async function offer(port: number, seconds: number, rate: number): Promise<Measured> {
  return openLoopLoad({
    port,
    path: '/flags/?v=2',
    headers: DECIDE_HEADERS,
    body: () => decideRequestBody(TOKEN, requestCounter++),
    rate,
    seconds,
    warmUpSeconds: WARM_UP_SECONDS,
  });
}

async function main() {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-flags-'));
  fs.chmodSync(tempDir, 0o755); // PostgreSQL runs as its own OS user and must reach its data dir
  const launcher = new ServiceLauncher(tempDir);
  const stopAll: (() => unknown)[] = [() => launcher.started.forEach((s) => s.child.kill('SIGKILL'))];
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
      if (mode === 'embedded') continue;
      const { child, port } = await startServer(mode, databaseUrl, projectId);
      stopAll.push(() => child.kill('SIGTERM'));
      servers[mode] = port;
    }
    const embeddedSeeding = Date.now();
    const embedded = await startEmbedded(path.join(tempDir, 'embedded'));
    stopAll.push(() => embedded.app.stop()); // waits for its exit: PGlite closed, --cpu-prof written
    servers.embedded = embedded.port;
    console.log(`embedded: seeded PGlite and started npm start in ${Date.now() - embeddedSeeding} ms`);
    // Every server must give the same answer for the ceiling to be the ceiling of the same work.
    for (let i = 0; i < 40; i++) {
      const answers = await Promise.all(
        MODES.map(async (mode) => {
          const response = await fetch(`http://127.0.0.1:${servers[mode]}/flags/?v=2`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.142' },
            body: decideRequestBody(TOKEN, i),
          });
          const body = (await response.json()) as { flags?: Record<string, unknown>; errorsWhileComputingFlags?: boolean };
          if (response.status !== 200 || Object.keys(body.flags ?? {}).length !== 50 || body.errorsWhileComputingFlags !== false) {
            throw new Error(`unexpected ${mode} decide answer ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
          }
          return JSON.stringify(body.flags);
        }),
      );
      const differing = MODES.filter((_, m) => answers[m] !== answers[0]);
      if (differing.length > 0) throw new Error(`request ${i}: ${differing.join(', ')} answered otherwise than the ceiling`);
    }
    console.log(
      `decide bench: 50 flags, ${RUNS} runs × ${SECONDS}s, ${CONNECTIONS} connections, target ${RATE} req/s, ${os.cpus().length} CPUs, node ${process.version}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const mode of MODES) await saturate(servers[mode], 2); // warm-up: JIT, pools, caches
    const perMode = <T>(make: () => T) => Object.fromEntries(MODES.map((mode) => [mode, make()])) as Record<Mode, T>;
    const saturation = perMode<Measured[]>(() => []);
    const atRate = perMode<Measured[]>(() => []);
    const ratios = perMode<number[]>(() => []);
    const atHalfCeiling = perMode<Measured[]>(() => []);
    const halfRates: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      // Interleaved so drift in machine load hits every mode alike.
      for (const mode of MODES) saturation[mode].push(await saturate(servers[mode], SECONDS));
      for (const mode of MODES) ratios[mode].push(saturation[mode][run]!.rps / saturation.ceiling[run]!.rps);
      for (const mode of MODES) atRate[mode].push(await offer(servers[mode], SECONDS, RATE));
      halfRates.push(Math.round(saturation.ceiling[run]!.rps / 2));
      // The ceiling too: its p99 at the same rate is the least any server doing this work can show here.
      for (const mode of AT_HALF_CEILING) atHalfCeiling[mode].push(await offer(servers[mode], SECONDS, halfRates[run]!));
    }
    const line = (label: string, runs: Measured[]) =>
      `  ${label.padEnd(22)} ${Math.round(median(runs.map((r) => r.rps)))
        .toString()
        .padStart(7)} req/s  p50 ${median(runs.map((r) => r.p50))} ms  p99 ${median(runs.map((r) => r.p99))} ms${
        runs[0]?.coldP99 === undefined ? '' : ` (first second after idle: p99 ${median(runs.map((r) => r.coldP99!))} ms)`
      }  errors ${runs.reduce((n, r) => n + r.errors, 0)}  (runs: ${runs.map((r) => Math.round(r.rps)).join(', ')})`;
    console.log('\nsaturation');
    for (const mode of MODES) console.log(line(mode, saturation[mode]));
    for (const mode of MODES.filter((m) => m !== 'ceiling'))
      console.log(
        `  ${mode} / ceiling (median of per-run ratios): ${median(ratios[mode]).toFixed(2)}  (runs: ${ratios[mode].map((r) => r.toFixed(2)).join(', ')})`,
      );
    console.log(`\nat ${RATE} req/s`);
    for (const mode of MODES) console.log(line(mode, atRate[mode]));
    console.log(`\nat half the ceiling's rate (runs: ${halfRates.join(', ')} req/s)`);
    for (const mode of AT_HALF_CEILING) console.log(line(mode, atHalfCeiling[mode]));
    console.log('\ntargets:');
    const ceilingHalfP99 = median(atHalfCeiling.ceiling.map((r) => r.p99));
    for (const mode of TARGETED) {
      const halfP99 = median(atHalfCeiling[mode].map((r) => r.p99));
      const p99Bound = P99_TO_CEILING * ceilingHalfP99;
      console.log(
        `  ${mode}: ≥ ${RATIO_TO_CEILING} × ceiling: ${median(ratios[mode]) >= RATIO_TO_CEILING ? 'met' : 'NOT met'} (${median(ratios[mode]).toFixed(2)}); ` +
          `p99 at half the ceiling's rate ≤ ${P99_TO_CEILING} × the ceiling's own (${ceilingHalfP99} ms): ${halfP99 <= p99Bound ? 'met' : 'NOT met'} (${halfP99} ms)`,
      );
    }
  } finally {
    await Promise.all(stopAll.reverse().map((stop) => stop()));
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
