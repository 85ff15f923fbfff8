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

/**
 * The table the analytics benchmarks print: per query kind our endpoint's and the hand-written
 * query's median, their ratio and whether they answered the same (target: ratio ≤ 1.5).
 */
export function printRatioTable(rows: string[][], run: { runs: number; events: number; worst: number }): void {
  const header = ['query kind', 'endpoint ms', 'hand-written ms', 'ratio', 'same answer'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\nmedians of ${run.runs} runs, ${run.events.toLocaleString('en-US')} events (target: ratio ≤ 1.5 for every kind)\n`);
  console.log(line(header));
  for (const r of rows) console.log(line(r));
  console.log(`\nworst ratio ${run.worst.toFixed(2)}`);
}
