import fs from 'node:fs';

/** USER_HZ on Linux: /proc's utime and stime are in these ticks. */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds of a process's threads by name (Linux /proc; empty elsewhere): which thread a
 * process's CPU goes to. PGlite's thread, libuv's pool (where chdb runs its queries) and chdb's
 * engine threads have names of their own; a trailing number in a name is shown as `#`.
 * `mainName` names the process's first thread; `nodeThreadsApart` keeps Node's other threads
 * (all named `node`) apart by id instead of adding them up.
 */
export function threadCpuSeconds(pid: number | undefined, options: { mainName: string; nodeThreadsApart?: boolean }): Map<string, number> {
  const out = new Map<string, number>();
  if (pid === undefined) return out;
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      // Fields after the parenthesised name: utime and stime are the 12th and 13th.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close).replace(/[0-9]+$/, '#');
      const name = task === String(pid) ? options.mainName : options.nodeThreadsApart && comm === 'node' ? `node#${task}` : comm;
      const fields = stat.slice(close + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** Each thread's CPU between two readings, in ms per 1,000 of `events`, largest first (under 0.5 left out). */
export function threadCpuSplit(before: Map<string, number>, after: Map<string, number>, events: number, digits: number): string {
  return [...after]
    .map(([name, s]) => [name, ((s - (before.get(name) ?? 0)) * 1000) / (events / 1000)] as const)
    .filter(([, ms]) => ms >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${ms.toFixed(digits)}`)
    .join(', ');
}
