/**
 * What the HTTP benchmarks share: each server under test runs in its own process (so the
 * load generator in the bench process does not steal its event loop) and reports its
 * port on stdout as `LISTENING <port>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

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

/** Times of our endpoint and of the hand-written query for one kind, and their last answers. */
export interface TimedAgainstBaseline<O, B> {
  oursMs: number[];
  baseMs: number[];
  lastOurs: O;
  lastBase: B;
}

/**
 * The analytics benchmarks' measurement: one warm-up each, then `runs` rounds that alternate our
 * endpoint and the hand-written query, so both see the same machine state.
 */
export async function timeAgainstBaseline<O, B>(
  runs: number,
  ours: () => Promise<O>,
  baseline: () => Promise<B>,
): Promise<TimedAgainstBaseline<Awaited<O>, Awaited<B>>> {
  const timed = async <T>(fn: () => Promise<T>): Promise<[number, Awaited<T>]> => {
    const started = performance.now();
    const value = await fn();
    return [performance.now() - started, value];
  };
  let lastOurs = await ours();
  let lastBase = await baseline();
  const oursMs: number[] = [];
  const baseMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [a, o] = await timed(ours);
    const [b, r] = await timed(baseline);
    oursMs.push(a);
    baseMs.push(b);
    lastOurs = o;
    lastBase = r;
  }
  return { oursMs, baseMs, lastOurs, lastBase };
}

/** One row of printRatioTable, and the ratio of the medians. */
export function ratioRow(kind: string, timed: { oursMs: number[]; baseMs: number[] }, sameAnswer: string): { row: string[]; ratio: number } {
  const ratio = median(timed.oursMs) / median(timed.baseMs);
  return { row: [kind, median(timed.oursMs).toFixed(0), median(timed.baseMs).toFixed(0), ratio.toFixed(2), sameAnswer], ratio };
}

/**
 * The table the analytics benchmarks print: per query kind our endpoint's and the hand-written
 * query's median, their ratio and whether they answered the same (target: ratio ≤ 1.5).
 */
export function printRatioTable(rows: string[][], run: { runs: number; events: number; worst: number; target?: number }): void {
  const header = ['query kind', 'endpoint ms', 'hand-written ms', 'ratio', 'same answer'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\nmedians of ${run.runs} runs, ${run.events.toLocaleString('en-US')} events (target: ratio ≤ ${run.target ?? 1.5} for every kind)\n`);
  console.log(line(header));
  for (const r of rows) console.log(line(r));
  console.log(`\nworst ratio ${run.worst.toFixed(2)}`);
}

/** CPU time (ms, user + system) a process has used so far, from Linux /proc; 0 elsewhere. */
export function processCpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ
  } catch {
    return 0;
  }
}
