/**
 * Embedded start benchmark: `npm start` (the all-in-one service, PGlite + chdb in one process)
 * from `node` to the first 200 on /_health, for a first start on an empty data directory and
 * for a restart on the same directory. Each run uses its own data directory. Prints medians
 * of RUNS runs (targets: first start ≤ 3 s, restart ≤ 1.5 s).
 *
 *   npm run bench:embedded-start     (BENCH_RUNS to tune; BENCH_FRESH_TEMPLATE=1 removes the
 *                                     install's PGlite template first, so the first start of
 *                                     the first run pays for making it)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pgliteTemplatePath } from '@sightline/postgres';
import { median } from './bench-process';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const ROOT = path.join(__dirname, '..');

async function timeToHealthy(dataDir: string, port: number): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/all-in-one/src/main.ts')], {
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
  if (process.env['BENCH_FRESH_TEMPLATE'] === '1') fs.rmSync(pgliteTemplatePath(), { force: true });
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, ${os.cpus().length} cores`,
  );
  const first: number[] = [];
  const restart: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-start-'));
    try {
      const port = 18_600 + run;
      first.push(await timeToHealthy(dataDir, port));
      restart.push(await timeToHealthy(dataDir, port));
      console.log(`run ${run + 1}: first start ${first[run]!.toFixed(0)} ms, restart ${restart[run]!.toFixed(0)} ms`);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  console.log(
    `\nmedians of ${RUNS} runs: first start ${median(first).toFixed(0)} ms (target ≤ 3000), restart ${median(restart).toFixed(0)} ms (target ≤ 1500)`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
