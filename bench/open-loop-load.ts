/**
 * Latency at a fixed offered rate, measured the way wrk2 does: requests are sent on a fixed
 * schedule whether or not earlier ones have been answered (a new keep-alive socket, up to 256, is
 * opened when every open one is busy), and each latency runs from the moment the request was DUE, not from
 * when it was sent. A server that stalls therefore pays for every request that was due during
 * the stall.
 *
 * Why not autocannon's `overallRate`: it gives each connection a quota per second and lets it send
 * back to back until the quota is spent, so every second starts with a burst of the whole second's
 * requests (at 2,000 req/s with 32 connections the server sees ~32 requests at once, then
 * silence), and its coordinated-omission correction takes the per-connection rate's interval in
 * seconds as milliseconds (1 ms), adding a synthetic sample per millisecond of each slow
 * answer. Both inflate p99 far beyond what a server sees at an even rate; autocannon is still
 * the right tool for saturation (closed loop), which is what the benchmarks use it for.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface OpenLoopOptions {
  port: number;
  path: string;
  method?: string;
  headers: Record<string, string>;
  /** The body of the n-th request. */
  body: (n: number) => string;
  rate: number;
  /** Measured seconds, after the warm-up. */
  seconds: number;
  /**
   * Seconds at the same rate before the measured ones, on the same sockets and schedule: the
   * server's caches, sockets and JIT reach the state they hold under this load. Their requests
   * give `coldP99` and are left out of every other figure.
   */
  warmUpSeconds?: number;
}

export interface OpenLoopResult {
  /** Requests answered 2xx per measured second of the schedule. */
  rps: number;
  p50: number;
  p99: number;
  /**
   * p99 of the warm-up's first second (NaN without a warm-up): the load arriving after an idle
   * spell, e.g. at a server whose caches expired while other servers were measured (decide's
   * person cache refills every known person at once).
   */
  coldP99: number;
  max: number;
  /** Failed or non-2xx answers to measured requests (warm-up ones included only if they failed). */
  errors: number;
  /** The most requests in flight at once: how far the server fell behind the schedule. */
  maxInFlight: number;
}

const MAX_SOCKETS = 256;

/** How long the last requests of a run may take before they count as errors. */
const DRAIN_MS = 10_000;

export async function openLoopLoad(options: OpenLoopOptions): Promise<OpenLoopResult> {
  // Enough sockets that a server keeping up never makes a request wait for one; bounded so an
  // overloaded server is measured (requests queue, their latency counting from when they were due)
  // rather than the client running out of file descriptors.
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
  const warmUpMs = (options.warmUpSeconds ?? 0) * 1000;
  const total = Math.round(options.rate * (options.seconds + (options.warmUpSeconds ?? 0)));
  const intervalMs = 1000 / options.rate;
  const latencies: number[] = [];
  const coldLatencies: number[] = [];
  let errors = 0;
  let settled = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let sent = 0;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const settle = () => {
    inFlight--;
    if (++settled === total) finish();
  };
  const start = performance.now();
  const send = (n: number, dueAt: number) => {
    const body = options.body(n);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const request = http.request(
      {
        agent,
        host: '127.0.0.1',
        port: options.port,
        path: options.path,
        method: options.method ?? 'POST',
        headers: { ...options.headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode! >= 200 && response.statusCode! < 300) {
            const latency = performance.now() - dueAt;
            const dueAfter = dueAt - start;
            if (dueAfter >= warmUpMs) latencies.push(latency);
            else if (dueAfter < 1000) coldLatencies.push(latency);
          } else errors++;
          settle();
        });
      },
    );
    request.on('error', () => {
      errors++;
      settle();
    });
    request.end(body);
  };

  // Node's timers fire at best every millisecond: each tick sends every request that has come due,
  // each timed from its own due moment, so timer slack counts against the server, never for it.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
      while (sent < due) {
        send(sent, start + sent * intervalMs);
        sent++;
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
      else resolve();
    };
    tick();
  });
  const drained = await Promise.race([done.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), DRAIN_MS).unref())]);
  if (!drained) errors += total - settled;
  agent.destroy();

  const quantile = (xs: number[], q: number) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! * 10) / 10 : NaN;
  };
  return {
    rps: latencies.length / options.seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    coldP99: quantile(coldLatencies, 0.99),
    max: quantile(latencies, 1),
    errors,
    maxInFlight,
  };
}
