/**
 * Embedded start benchmark: `npm start`'s command (the all-in-one service, PGlite + chdb in one
 * process, run from its compiled bundle by scripts/run-compiled.cjs) from `node` to the first
 * 200 on /_health, for a first start on an empty data directory and for a restart on the same
 * directory. Each run uses its own data directory. Prints medians of RUNS runs (targets: first
 * start ≤ 3 s, restart ≤ 1.5 s).
 *
 *   npm run bench:embedded-start     (BENCH_RUNS to tune; BENCH_FRESH_TEMPLATE=1 removes the
 *                                     install's PGlite template first, so the first start of
 *                                     the first run pays for making it; BENCH_TSX=1 also times
 *                                     the sources run through tsx, as tests run them, in
 *                                     the same runs; BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"
 *                                     profiles every start, which it slows)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pgliteTemplatePath } from '@sightline/postgres';
import { EMBEDDED_SOURCE_NODE_ARGS, npmStartNodeArgs } from '@sightline/testkit';
import { median } from './bench-process';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
/** Node flags put before each variant's own, e.g. --cpu-prof (written when the service exits on SIGTERM). */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const ROOT = path.join(__dirname, '..');

async function timeToHealthy(nodeArgs: string[], dataDir: string, port: number): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [...NODE_ARGS, ...nodeArgs], {
    cwd: ROOT,
    env: { ...process.env, SIGHTLINE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`service exited with ${code}`))));
  try {
    for (;;) {
      const ok = await Promise.race([
        fetch(`http://127.0.0.1:${port}/_health`).then(
          (r) => r.status === 200,
          () => false,
        ),
        exited,
      ]);
      if (ok) return performance.now() - started;
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.removeAllListeners('exit');
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
}

async function main() {
  if (process.env['BENCH_FRESH_TEMPLATE'] === '1') fs.rmSync(pgliteTemplatePath(), { recursive: true, force: true });
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, ${os.cpus().length} cores`,
  );
  const variants = [{ name: 'npm start', args: npmStartNodeArgs() }];
  // Compiled first, as `npm ci` leaves it (an edited source would be compiled by the first start).
  if (variants[0]!.args[0]?.endsWith('run-compiled.cjs')) {
    spawnSync(process.execPath, [variants[0]!.args[0], '--build', ...variants[0]!.args.slice(1)], { cwd: ROOT, stdio: 'inherit' });
  }
  if (process.env['BENCH_TSX'] === '1') variants.push({ name: 'through tsx', args: [...EMBEDDED_SOURCE_NODE_ARGS] });
  const first = variants.map(() => [] as number[]);
  const restart = variants.map(() => [] as number[]);
  for (let run = 0; run < RUNS; run++) {
    // The variants take turns within a run, so a change in the machine's load falls on both.
    for (const [i, variant] of variants.entries()) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-start-'));
      try {
        const port = 18_600 + run;
        first[i]!.push(await timeToHealthy(variant.args, dataDir, port));
        restart[i]!.push(await timeToHealthy(variant.args, dataDir, port));
        console.log(`run ${run + 1} (${variant.name}): first start ${first[i]![run]!.toFixed(0)} ms, restart ${restart[i]![run]!.toFixed(0)} ms`);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  console.log('');
  for (const [i, variant] of variants.entries()) {
    console.log(
      `${variant.name}, medians of ${RUNS} runs: first start ${median(first[i]!).toFixed(0)} ms (target ≤ 3000), restart ${median(restart[i]!).toFixed(0)} ms (target ≤ 1500)`,
    );
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at the end`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
