/**
 * CPU time per 10,000 decide requests of each server of bench:flags (ceiling, api, embedded):
 * far less sensitive to other load on the machine than req/s or latency. Reads each server
 * process's CPU (all threads, and its main thread alone) from /proc around a closed-loop run.
 *
 *   npm run bench:flags-cpu    (BENCH_MODES=ceiling,api,embedded BENCH_REQUESTS=10000 BENCH_ROUNDS=3 BENCH_NODE_ARGS=...)
 *
 * A mode `api@/path/to/checkout` runs that checkout's server (e.g. a worktree of main) beside
 * this one's, so two versions are compared in one run; `api+--flag` adds node flags to one server
 * (`embedded+--flag` starts a second `npm start`, on its own data directory). BENCH_GC_LOG=DIR keeps each server's
 * output (with BENCH_NODE_ARGS=--trace-gc, its GC pauses; with --require ./bench/loop-monitor.cjs, event-loop
 * delay and GC pauses every 5 s); BENCH_RATE also offers that rate.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { bootstrapInstance } from '@sightline/accounts';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { startEmbeddedSightline } from '@sightline/testkit';
import { ServiceLauncher, startPostgres } from '@sightline/local-services';
import { startBenchServer } from './bench-process';
import { openLoopLoad } from './open-loop-load';
import { decideRequestBody, seedDecideBenchmark } from './flags-fixtures';

const MODES = (process.env['BENCH_MODES'] ?? 'ceiling,api,embedded').split(',');
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 10_000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const TOKEN = 'phc_bench_flags_token_01';
const PERSONAL_KEY = 'phx_bench_flags_personal_key_01';
/** A directory to write each server's output to (with BENCH_NODE_ARGS=--trace-gc: its GC pauses). */
const GC_LOG = process.env['BENCH_GC_LOG'];
/** Also offer this rate to each server for 5 s (after 2 s of warm-up) and print its latency. */
const RATE = Number(process.env['BENCH_RATE'] ?? 0);
const TICK_MS = 1000 / 100;

/** CPU ms of a process (all threads) and of its main thread. */
function cpuOf(pid: number): { total: number; main: number } {
  const ticks = (stat: string) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  };
  return { total: ticks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')), main: ticks(fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')) };
}

let counter = 0;
async function load(port: number, amount: number) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 8,
    amount,
    requests: [
      {
        method: 'POST',
        path: '/flags/?v=2',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.142' },
        setupRequest: (req) => ({ ...req, body: decideRequestBody(TOKEN, counter++) }),
      },
    ],
  });
  if (result.errors + result.non2xx + result.timeouts > 0) throw new Error(`errors: ${result.errors} non2xx ${result.non2xx}`);
}

async function main() {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-flags-cpu-'));
  fs.chmodSync(tempDir, 0o755);
  const launcher = new ServiceLauncher(tempDir);
  const stops: (() => unknown)[] = [() => launcher.started.forEach((s) => s.child.kill('SIGKILL'))];
  try {
    const servers: Array<{ mode: string; pid: number; port: number }> = [];
    if (MODES.some((m) => m.split('+')[0] !== 'embedded')) {
      const { postgresAdminUrl } = await startPostgres(launcher);
      const admin = new Client({ connectionString: postgresAdminUrl });
      await admin.connect();
      await admin.query('CREATE DATABASE bench_flags');
      await admin.end();
      const databaseUrl = postgresAdminUrl.replace(/\/postgres$/, '/bench_flags');
      const db = await createMetadataStore({ url: databaseUrl });
      await migratePostgres(db);
      const { projectId } = await bootstrapInstance(db, { projectApiKey: TOKEN });
      await seedDecideBenchmark(db, projectId);
      await db.query('ANALYZE');
      await db.close();
      for (const label of MODES.filter((m) => m.split('+')[0] !== 'embedded')) {
        // `api@/other/checkout`: the same server from another checkout, to compare two versions in one run.
        // `api+--max-semi-space-size=64`: the same server with more node flags (e.g. GC settings).
        const [server, ...flags] = label.split('+') as [string, ...string[]];
        const [mode, checkout] = server.split('@') as [string, string | undefined];
        const { child, port } = await startBenchServer(label, [
          ...NODE_ARGS,
          ...flags,
          '--import',
          'tsx',
          path.join(checkout ?? path.join(__dirname, '..'), 'bench', 'flags-decide-server.ts'),
          mode,
          databaseUrl,
          String(projectId),
        ]);
        stops.push(() => child.kill('SIGTERM'));
        if (GC_LOG) child.stdout!.pipe(fs.createWriteStream(path.join(GC_LOG, `${label.replace(/\W+/g, '_')}.log`)));
        servers.push({ mode: label, pid: child.pid!, port });
      }
    }
    // `embedded+--flag`: another `npm start` on its own data directory with more node flags, beside the plain one.
    for (const label of MODES.filter((m) => m.split('+')[0] === 'embedded')) {
      const flags = label.split('+').slice(1);
      const dataDir = path.join(tempDir, label.replace(/\W+/g, '_'));
      const db = await createMetadataStore({ dataDir });
      await migratePostgres(db);
      const { projectId } = await bootstrapInstance(db, { projectApiKey: TOKEN, personalApiKey: PERSONAL_KEY });
      await seedDecideBenchmark(db, projectId);
      await db.query('ANALYZE');
      await db.close();
      // As the service starts (`npm start`, its node flags included).
      const embedded = await startEmbeddedSightline({
        dataDir,
        projectApiKey: TOKEN,
        personalApiKey: PERSONAL_KEY,
        nodeArgs: [...NODE_ARGS, ...flags],
        npmStart: true,
      });
      stops.push(async () => {
        if (GC_LOG) fs.writeFileSync(path.join(GC_LOG, `${label.replace(/\W+/g, '_')}.log`), embedded.app.output());
        await embedded.app.stop();
      });
      servers.push({ mode: label, pid: embedded.app.proc.pid!, port: embedded.port });
    }
    for (const s of servers) await load(s.port, 4000); // JIT, caches
    const per10k: Record<string, Array<{ total: number; main: number }>> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of servers) {
        const before = cpuOf(s.pid);
        await load(s.port, REQUESTS);
        const after = cpuOf(s.pid);
        (per10k[s.mode] ??= []).push({ total: ((after.total - before.total) * 10_000) / REQUESTS, main: ((after.main - before.main) * 10_000) / REQUESTS });
      }
    }
    if (RATE > 0) {
      const p99s: Record<string, string[]> = {};
      for (let round = 0; round < ROUNDS; round++)
        for (const s of servers) {
          const r = await openLoopLoad({
            port: s.port,
            path: '/flags/?v=2',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.142' },
            body: () => decideRequestBody(TOKEN, counter++),
            rate: RATE,
            seconds: 5,
            warmUpSeconds: 2,
          });
          (p99s[s.mode] ??= []).push(`p50 ${r.p50} p99 ${r.p99} max ${r.max}`);
        }
      console.log(`at ${RATE} req/s`);
      for (const [mode, runs] of Object.entries(p99s)) console.log(`  ${mode.padEnd(10)} ${runs.join(' | ')}`);
    }
    console.log(`CPU ms per 10k requests (${ROUNDS} rounds of ${REQUESTS}; load average ${os.loadavg()[0]!.toFixed(1)})`);
    for (const [mode, runs] of Object.entries(per10k)) {
      const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      console.log(
        `  ${mode.padEnd(10)} total ${med(runs.map((r) => r.total)).toFixed(0)}  main thread ${med(runs.map((r) => r.main)).toFixed(0)}  (runs: ${runs.map((r) => r.total.toFixed(0)).join(', ')})`,
      );
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
