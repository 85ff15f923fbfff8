/**
 * What the HTTP benchmarks share: each server under test runs in its own process (so the
 * load generator in the bench process does not steal its event loop) and reports its
 * port on stdout as `LISTENING <port>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export async function startBenchServer(label: string, args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${label} server exited with ${code}`)));
  });
  return { child, port };
}

/** The median of an odd number of runs is one of them; of an even number, the upper middle one. */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
