/**
 * Preload for a bench server (BENCH_NODE_ARGS="--require ./bench/loop-monitor.cjs"): every 5 s it
 * prints the event loop's delay (perf_hooks monitorEventLoopDelay: p50, p99, p99.9, max) and the
 * GC pauses of that window (count, total, longest, by kind: 1 scavenge, 4 mark-sweep, 8
 * incremental marking), and each pause over 5 ms as it happens: what a server's latency tail
 * waits behind. With bench:flags-cpu, BENCH_GC_LOG=DIR keeps each server's lines.
 */
'use strict';
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let gc = { count: 0, total: 0, longest: 0, byKind: {} };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = entry.detail?.kind ?? 0;
    gc.count++;
    gc.total += entry.duration;
    gc.longest = Math.max(gc.longest, entry.duration);
    gc.byKind[kind] = (gc.byKind[kind] ?? 0) + entry.duration;
    if (entry.duration > 5) process.stdout.write(`GC pause ${entry.duration.toFixed(1)} ms (kind ${kind})\n`);
  }
}).observe({ entryTypes: ['gc'] });

const ms = (ns) => (ns / 1e6).toFixed(1);
setInterval(() => {
  const kinds = Object.entries(gc.byKind)
    .map(([kind, total]) => `${kind}:${total.toFixed(0)}`)
    .join(' ');
  process.stdout.write(
    `loop delay p50 ${ms(delay.percentile(50))} p99 ${ms(delay.percentile(99))} p99.9 ${ms(delay.percentile(99.9))} max ${ms(delay.max)} ms | ` +
      `GC ${gc.count} pauses, ${gc.total.toFixed(0)} ms, longest ${gc.longest.toFixed(1)} ms (by kind ${kinds})\n`,
  );
  delay.reset();
  gc = { count: 0, total: 0, longest: 0, byKind: {} };
}, 5000).unref();
