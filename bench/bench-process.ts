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

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
