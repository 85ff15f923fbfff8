// One client must not exhaust the process: the embedded all-in-one service (chdb, PGlite,
// in-process bus) as a real child process, sent the largest analytics requests a client may
// make (and the probe's, which it may not) while capture and decide are timed and the heap is
// sampled. Issue 25: a minute trend over 47 hours with a distinct_id breakdown of 1000 values
// answered 194 MB after 40 s and held capture and decide for all of it; five of them killed V8.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedSightline, waitFor, type EmbeddedSightline } from '@sightline/testkit';

const PROJECT_KEY = 'phc_exhaustion_project_key';
const PERSONAL_KEY = 'phx_exhaustion_personal_key';
const AUTH = { Authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' };
const HOUR_MS = 3_600_000;
/** Events seeded over the last 47 hours, by this many distinct ids (each a person). */
const EVENTS = 6_000;
const DISTINCT_IDS = 1_500;
/**
 * What the heavy requests may add to the p99 of capture and decide: the p99 under load must stay
 * under the same run's baseline p99 plus this. On a quiet machine the baseline is a few ms, so
 * this is "p99 under 100 ms"; on a machine loaded by other work the baseline carries the noise
 * that is not this service's (measured on a shared 2-core machine: baseline p99 alone 90-650 ms).
 */
const P99_ADDED_BOUND_MS = 100;
/** The heap (V8's used heap, from /metrics) must stay under this while they run. */
const HEAP_BOUND_BYTES = 600 * 1024 * 1024;
/** How long the baseline samples capture and decide, and the least the load lasts. */
const BASELINE_MS = 8_000;
const LOADED_MS = BASELINE_MS;

interface Timed {
  status: number;
  ms: number;
}

async function timed(url: string, init: RequestInit): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(url, init);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const percentile = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)] ?? 0);
};
const p99 = (samples: number[]) => percentile(samples, 0.99);
const p50 = (samples: number[]) => percentile(samples, 0.5);

/**
 * Capture and decide, each sent one after another with a short pause, until `until` settles:
 * the latency a client of the hot paths sees while whatever else runs.
 */
async function measureHotPaths(base: string, until: Promise<unknown>): Promise<{ capture: number[]; decide: number[]; failures: string[] }> {
  let done = false;
  const stop = () => void (done = true);
  until.then(stop, stop);
  const capture: number[] = [];
  const decide: number[] = [];
  const failures: string[] = [];
  const loop = async (samples: number[], send: (i: number) => Promise<Timed>) => {
    for (let i = 0; !done; i++) {
      const { status, ms } = await send(i);
      if (status !== 200) failures.push(`status ${status}`);
      samples.push(ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const sendCapture = (i: number) =>
    timed(`${base}/capture/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: PROJECT_KEY, event: 'hot_path', distinct_id: `hot-${i % 50}`, properties: { i } }),
    });
  const sendDecide = (i: number) =>
    timed(`${base}/decide/?v=3`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: PROJECT_KEY, distinct_id: `user-${i % DISTINCT_IDS}` }),
    });
  // Two clients of each, for samples enough that a p99 is not just the slowest one.
  await Promise.all([loop(capture, sendCapture), loop(capture, sendCapture), loop(decide, sendDecide), loop(decide, sendDecide)]);
  return { capture, decide, failures };
}

/** The service's used heap, and the longest its event loop was held since the last read (prom-client's default metrics). */
async function processGauges(base: string): Promise<{ heapUsed: number; loopLagMax: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { heapUsed: gauge('nodejs_heap_size_used_bytes'), loopLagMax: gauge('nodejs_eventloop_lag_max_seconds') };
}

describe('one client cannot exhaust the process', () => {
  let dataDir: string;
  let sightline: EmbeddedSightline;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-exhaustion-'));
    sightline = await startEmbeddedSightline({
      dataDir,
      projectApiKey: PROJECT_KEY,
      personalApiKey: PERSONAL_KEY,
    });
    const { base } = sightline;
    // Seed: events over the last 47 hours from many distinct ids, and a flag decide evaluates.
    const now = Date.now();
    for (let start = 0; start < EVENTS; start += 1_000) {
      const batch = Array.from({ length: 1_000 }, (_, k) => {
        const i = start + k;
        return {
          event: `step_${i % 4}`,
          distinct_id: `user-${i % DISTINCT_IDS}`,
          timestamp: new Date(now - 47 * HOUR_MS + Math.floor((i / EVENTS) * 46 * HOUR_MS)).toISOString(),
          properties: { $browser: `browser-${i % 7}`, plan: `plan-${i % 3}` },
        };
      });
      const res = await fetch(`${base}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: PROJECT_KEY, batch }),
      });
      expect(res.status).toBe(200);
    }
    const flag = await fetch(`${base}/api/projects/1/feature_flags/`, {
      method: 'POST',
      headers: AUTH,
      body: JSON.stringify({ key: 'half', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } }),
    });
    expect(flag.status).toBe(201);
    await waitFor(
      async () => {
        const res = await fetch(`${base}/api/projects/1/insights/trend/`, {
          method: 'POST',
          headers: AUTH,
          body: JSON.stringify({ events: [{ id: null }], date_from: '-48h', display: 'BoldNumber', refresh: true }),
        });
        const body = (await res.json()) as { result?: { aggregated_value: number }[] };
        return (body.result?.[0]?.aggregated_value ?? 0) >= EVENTS;
      },
      { timeoutMs: 120_000, intervalMs: 1000, description: 'the seeded events in trends' },
    );
  });
  afterAll(async () => {
    await sightline?.app.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps capture and decide fast and the heap bounded under the largest analytics requests', async () => {
    const { base } = sightline;
    // refresh: every request computes its answer, none is served from the cache.
    const post = (route: string, body: object) => timed(`${base}${route}`, { method: 'POST', headers: AUTH, body: JSON.stringify({ ...body, refresh: true }) });
    const get = (route: string) => timed(`${base}${route}`, { headers: AUTH });

    // prom-client's event-loop gauge holds the longest hold since it was last read: read before
    // each measurement, so neither carries the start-up and seeding before it.
    await processGauges(base);
    const baseline = await measureHotPaths(base, new Promise((resolve) => setTimeout(resolve, BASELINE_MS)));
    const baselineLoopLag = (await processGauges(base)).loopLagMax;

    // Different ranges: five answers held at once, as in the probe.
    const ranges = ['-47h', '-46h', '-45h', '-44h', '-43h'];
    const steps = Array.from({ length: 20 }, (_, i) => ({ id: `step_${i % 4}`, order: i }));
    const heavy: [string, () => Promise<Timed>, number][] = [
      // The probe's shape: refused before any work (breakdown_limit is lowered to 250, and
      // 252 values × 2821 minute buckets is over the points bound).
      ...ranges.map((date_from): [string, () => Promise<Timed>, number] => [
        `probe trend ${date_from}`,
        () =>
          post('/api/projects/1/insights/trend/', {
            events: [{ id: 'step_0' }],
            interval: 'minute',
            date_from,
            breakdown: 'distinct_id',
            breakdown_limit: 1000,
          }),
        400,
      ]),
      // The largest it allows: 62 values × 2821 minute buckets.
      ...ranges.map((date_from): [string, () => Promise<Timed>, number] => [
        `largest minute trend ${date_from}`,
        () =>
          post('/api/projects/1/insights/trend/', { events: [{ id: 'step_0' }], interval: 'minute', date_from, breakdown: 'distinct_id', breakdown_limit: 60 }),
        200,
      ]),
      [
        'largest hourly breakdown trend',
        () =>
          post('/api/projects/1/insights/trend/', {
            events: [{ id: null }],
            interval: 'hour',
            date_from: '-30d',
            breakdown: 'distinct_id',
            breakdown_limit: 250,
          }),
        200,
      ],
      [
        'largest funnel',
        () =>
          post('/api/projects/1/insights/funnel/', {
            events: steps,
            date_from: '-47h',
            funnel_window_days: 3650,
            breakdown: 'distinct_id',
            breakdown_limit: 250,
          }),
        200,
      ],
      [
        'event correlation',
        () => post('/api/projects/1/insights/funnel/correlation/', { events: steps.slice(0, 2), date_from: '-47h', funnel_correlation_type: 'events' }),
        200,
      ],
      [
        'property correlation',
        () =>
          post('/api/projects/1/insights/funnel/correlation/', {
            events: steps.slice(0, 2),
            date_from: '-47h',
            funnel_correlation_type: 'properties',
            funnel_correlation_names: ['$browser', 'plan'],
          }),
        200,
      ],
      ['persons list', () => get('/api/projects/1/persons/?limit=1000000'), 200],
      ['events list', () => get('/api/projects/1/events/?limit=100000'), 200],
    ];

    let heapPeak = 0;
    let loopLagPeak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const gauges = await processGauges(base);
        heapPeak = Math.max(heapPeak, gauges.heapUsed);
        loopLagPeak = Math.max(loopLagPeak, gauges.loopLagMax);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const round = () => Promise.all(heavy.map(async ([name, send, expected]) => ({ name, expected, ...(await send()) })));
    // Round after round for as long as the baseline sampled (two at least): a p99 over as many
    // samples as the baseline's, not the worst one or two of a short burst.
    const answers = (async () => {
      const started = performance.now();
      const all: Awaited<ReturnType<typeof round>> = [];
      for (let rounds = 0; rounds < 2 || performance.now() - started < LOADED_MS; rounds++) all.push(...(await round()));
      return all;
    })();
    const loaded = await measureHotPaths(base, answers);
    sampling = false;
    await sampler;

    const summary = {
      baseline: {
        capture: p99(baseline.capture),
        decide: p99(baseline.decide),
        p50: [p50(baseline.capture), p50(baseline.decide)],
        eventLoopHeldMaxMs: Math.round(baselineLoopLag * 1000),
      },
      loaded: {
        capture: p99(loaded.capture),
        decide: p99(loaded.decide),
        p50: [p50(loaded.capture), p50(loaded.decide)],
        samples: loaded.capture.length + loaded.decide.length,
      },
      heapPeakMiB: Math.round(heapPeak / 1024 / 1024),
      eventLoopHeldMaxMs: Math.round(loopLagPeak * 1000),
      answers: (await answers).slice(0, heavy.length).map(({ name, status, ms }) => `${name}: ${status} in ${Math.round(ms)} ms`),
      rounds: (await answers).length / heavy.length,
    };
    // Printed so a slow run can be read against its own baseline.
    process.stdout.write(`exhaustion: ${JSON.stringify(summary, null, 1)}\n`);

    for (const answer of await answers) expect({ name: answer.name, status: answer.status }).toEqual({ name: answer.name, status: answer.expected });
    expect(baseline.failures).toEqual([]);
    expect(loaded.failures).toEqual([]);
    expect(sightline.app.proc.exitCode).toBeNull();
    expect(heapPeak).toBeGreaterThan(0);
    expect(heapPeak).toBeLessThan(HEAP_BOUND_BYTES);
    expect(summary.loaded.capture).toBeLessThan(summary.baseline.capture + P99_ADDED_BOUND_MS);
    expect(summary.loaded.decide).toBeLessThan(summary.baseline.decide + P99_ADDED_BOUND_MS);
  });
});
