// End to end, embedded mode: the all-in-one app as a real child process (chdb + PGlite +
// in-process bus + cron under a temp SIGHTLINE_DATA_DIR), driven over HTTP only.
// Startup and bootstrap banner, capture → trends, API errors, durability across
// kill -9 and a graceful SIGTERM with a capture in flight.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  DISTRIBUTED_VARS,
  EMBEDDED_LISTENING,
  EMBEDDED_STARTUP_TIMEOUT_MS,
  getJson,
  postJson,
  startEmbeddedSightline,
  uniqueName,
  waitFor,
  type EmbeddedSightline,
  type StartedProcess,
} from '@sightline/testkit';

const PROJECT_KEY = 'phc_e2e_embedded_project_key';
const PERSONAL_KEY = 'phx_e2e_embedded_personal_key';
const SHUTDOWN_TIMEOUT_MS = 8000;
const STARTUP_TIMEOUT_MS = EMBEDDED_STARTUP_TIMEOUT_MS;
const LISTENING = EMBEDDED_LISTENING;
const DAY_MS = 86_400_000;
const BANNER = 'Sightline is set up';

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

type Running = EmbeddedSightline;

const startAllInOne = (dataDir: string): Promise<Running> =>
  startEmbeddedSightline({ dataDir, projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY, shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS });

/** The child's own environment as the kernel sees it (Linux), or null elsewhere. */
function childEnvironment(pid: number | undefined): Record<string, string> | null {
  if (pid === undefined) return null;
  try {
    const raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    return Object.fromEntries(
      raw
        .split('\0')
        .filter(Boolean)
        .map((pair) => {
          const i = pair.indexOf('=');
          return [pair.slice(0, i), pair.slice(i + 1)];
        }),
    );
  } catch {
    return null;
  }
}

function exited(app: StartedProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { proc } = app;
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve({ code: proc.exitCode, signal: proc.signalCode });
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
}

interface TrendSeries {
  data: number[];
  days: string[];
  count: number;
  label: string;
}

async function trend(base: string, ...events: string[]): Promise<TrendSeries[]> {
  const { status, body } = await postJson(
    `${base}/api/environments/1/insights/trend/`,
    // Polled until the pipeline delivers: refresh, or the answer cache would repeat the first one.
    { events: events.map((id) => ({ id, math: 'total' })), refresh: true },
    { authorization: `Bearer ${PERSONAL_KEY}` },
  );
  if (status !== 200) throw new Error(`trend answered ${status}: ${JSON.stringify(body)}`);
  return body.result as TrendSeries[];
}

/** The count in the bucket of `day` (YYYY-MM-DD), failing if the range does not include it. */
function onDay(series: TrendSeries, day: string): number {
  const i = series.days.indexOf(day);
  if (i < 0) throw new Error(`day ${day} not in ${JSON.stringify(series.days)}`);
  return series.data[i]!;
}

const capture = (base: string, event: string, distinctId: string, extra: Record<string, unknown> = {}) =>
  postJson(`${base}/capture/`, { api_key: PROJECT_KEY, event, distinct_id: distinctId, properties: { $lib: 'e2e' }, ...extra });

const expectApiError = (body: any) => expect(body).toEqual({ type: expect.any(String), code: expect.any(String), detail: expect.any(String), attr: null });

describe('all-in-one (embedded mode) end to end', () => {
  let dataDir: string;
  let current: Running | undefined;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-e2e-embedded-'));
  });

  afterAll(async () => {
    await current?.app.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const running = (): Running => {
    if (!current) throw new Error('the all-in-one is not running (an earlier test failed to start it)');
    return current;
  };

  it('starts with the keys banner and the listening line, and is ready', async () => {
    current = await startAllInOne(dataDir);
    const { app, base, port, startupMs } = current;
    const output = app.output();
    const reported = /"startupMs":(\d+)/.exec(output)?.[1];
    console.log(`all-in-one first start: listening after ${startupMs} ms from spawn (app-reported startupMs=${reported ?? '?'})`);

    expect(output).toContain(BANNER);
    expect(output).toContain(`project API key:   ${PROJECT_KEY}`);
    expect(output).toContain(`personal API key:  ${PERSONAL_KEY}`);
    expect(output).toMatch(new RegExp(`Sightline listening on http://localhost:${port}`));
    // The banner is printed once, before the listening line.
    expect(output.split(BANNER)).toHaveLength(2);
    expect(output.indexOf(BANNER)).toBeLessThan(output.search(LISTENING));
    expect(startupMs).toBeLessThan(STARTUP_TIMEOUT_MS);

    // The server-mode variables really are absent from the child.
    const childEnv = childEnvironment(app.proc.pid);
    if (childEnv) {
      for (const name of DISTRIBUTED_VARS) expect(childEnv[name]).toBeUndefined();
      expect(childEnv['SIGHTLINE_DATA_DIR']).toBe(dataDir);
    }
    expect(fs.readdirSync(dataDir).length).toBeGreaterThan(0);

    const ready = await getJson(`${base}/_ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect((await getJson(`${base}/_health`)).status).toBe(200);
  });

  it('captures single events and batches into trends, on the right day, and answers API errors in the PostHog envelope', async () => {
    const { base } = running();
    const single = uniqueName('e2e_single');
    const batched = uniqueName('e2e_batched');
    const past = uniqueName('e2e_past');

    const today = utcDay(Date.now());
    expect(await capture(base, single, 'user-1')).toEqual({ status: 200, body: { status: 1 } });

    const batch = await postJson(`${base}/batch/`, {
      api_key: PROJECT_KEY,
      batch: [
        { event: single, distinct_id: 'user-2', properties: { plan: 'free' } },
        { event: batched, distinct_id: 'user-1', properties: {} },
        { event: batched, distinct_id: 'user-3', properties: {} },
        { event: batched, distinct_id: 'user-4' },
        // No distinct_id: dropped, yet the request is accepted.
        { event: batched, properties: { note: 'invalid' } },
      ],
    });
    // The answer names the event it dropped (PostHog's clients ignore the extra field).
    expect(batch).toEqual({ status: 200, body: { status: 1, dropped: [{ index: 4, reason: 'missing_distinct_id' }] } });

    const threeDaysAgoMs = Date.now() - 3 * DAY_MS;
    expect(await capture(base, past, 'user-5', { timestamp: new Date(threeDaysAgoMs).toISOString() })).toEqual({ status: 200, body: { status: 1 } });

    // Embedded mode: a 200 means written, so the counts are exact at once.
    const [singleSeries, batchedSeries, pastSeries] = await trend(base, single, batched, past);
    expect(singleSeries!.data).toHaveLength(8);
    expect(singleSeries!.days[7]).toBe(utcDay(Date.now()));
    expect(singleSeries!.label).toBe(single);
    expect(onDay(singleSeries!, today)).toBe(2);
    expect(singleSeries!.count).toBe(2);
    expect(onDay(batchedSeries!, today)).toBe(3);
    expect(batchedSeries!.count).toBe(3);
    expect(onDay(pastSeries!, utcDay(threeDaysAgoMs))).toBe(1);
    expect(pastSeries!.count).toBe(1);

    // Projects: project 1 with the fixed project key.
    const projects = await getJson(`${base}/api/projects/`, { authorization: `Bearer ${PERSONAL_KEY}` });
    expect(projects.status).toBe(200);
    expect(projects.body.results).toEqual(expect.arrayContaining([expect.objectContaining({ id: 1, api_token: PROJECT_KEY })]));

    // No credentials: 401 in the DRF envelope, on both API routes.
    const anonymousProjects = await getJson(`${base}/api/projects/`);
    expect(anonymousProjects.status).toBe(401);
    expectApiError(anonymousProjects.body);
    expect(anonymousProjects.body.type).toBe('authentication_error');
    const anonymousTrend = await postJson(`${base}/api/environments/1/insights/trend/`, { events: [{ id: single, math: 'total' }], refresh: true });
    expect(anonymousTrend.status).toBe(401);
    expectApiError(anonymousTrend.body);

    // A wrong personal key is refused too.
    const wrongKey = await getJson(`${base}/api/projects/`, { authorization: 'Bearer phx_not_a_real_key_123' });
    expect(wrongKey.status).toBe(401);
    expectApiError(wrongKey.body);

    // Malformed JSON: 400 JSON.
    const malformed = await postJson(`${base}/capture/`, '{"api_key": "phc_x", "event": ');
    expect(malformed.status).toBe(400);
    expectApiError(malformed.body);
    expect(malformed.body.type).toBe('validation_error');

    // Unknown project key: 401, and nothing is counted.
    const unknown = await postJson(`${base}/capture/`, { api_key: 'phc_unknown_project_key_1', event: single, distinct_id: 'user-1' });
    expect(unknown.status).toBe(401);
    expectApiError(unknown.body);
    expect(unknown.body.type).toBe('authentication_error');
    const [after] = await trend(base, single);
    expect(after!.count).toBe(2);
  });

  it('keeps every acknowledged event across kill -9, and bootstraps only once', async () => {
    const { app, base } = running();
    const event = uniqueName('e2e_durable');
    const N = 20;
    for (let i = 0; i < N; i++) {
      const response = await capture(base, event, `durable-${i}`);
      expect(response).toEqual({ status: 200, body: { status: 1 } });
    }
    // At once after the last 200: no chance to flush anything more.
    app.kill('SIGKILL');
    const exit = await exited(app);
    expect(exit.signal).toBe('SIGKILL');
    await app.stop();
    current = undefined;

    current = await startAllInOne(dataDir);
    console.log(`all-in-one restart after kill -9: listening after ${current.startupMs} ms from spawn`);
    const output = current.app.output();
    expect(output).not.toContain(BANNER);
    expect(output).not.toContain(PERSONAL_KEY);
    expect(output).toMatch(LISTENING);
    expect((await getJson(`${current.base}/_ready`)).status).toBe(200);

    const [series] = await trend(current.base, event);
    expect(series!.count).toBe(N);
    expect(onDay(series!, utcDay(Date.now()))).toBe(N);
    // Earlier data and the bootstrap keys survived too.
    const projects = await getJson(`${current.base}/api/projects/`, { authorization: `Bearer ${PERSONAL_KEY}` });
    expect(projects.status).toBe(200);
    expect(projects.body.results).toEqual(expect.arrayContaining([expect.objectContaining({ id: 1, api_token: PROJECT_KEY })]));
  });

  it('shuts down gracefully on SIGTERM with a capture in flight, and that event is kept', async () => {
    const { app, port } = running();
    const event = uniqueName('e2e_inflight');
    const body = JSON.stringify({ api_key: PROJECT_KEY, event, distinct_id: 'inflight-user', properties: { $lib: 'e2e' } });
    const half = Math.floor(body.length / 2);

    // A capture whose body is only half sent: the server has the request, and is waiting for the rest.
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/capture/',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      request.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      });
      request.on('error', reject);
    });
    request.write(body.slice(0, half));
    await new Promise((resolve) => setTimeout(resolve, 500));

    const exit = exited(app);
    const signalledAt = Date.now();
    app.kill('SIGTERM');
    await waitFor(() => app.output().includes('shutting down'), { timeoutMs: 5000, description: 'the shutdown to begin' });
    request.end(body.slice(half));

    expect(await response).toEqual({ status: 200, text: JSON.stringify({ status: 1 }) });
    const { code, signal } = await exit;
    const shutdownMs = Date.now() - signalledAt;
    console.log(`all-in-one graceful shutdown: exited ${code ?? signal} ${shutdownMs} ms after SIGTERM (deadline ${SHUTDOWN_TIMEOUT_MS} ms)`);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(shutdownMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    expect(app.output()).toContain('shutdown complete');
    await app.stop();
    current = undefined;

    current = await startAllInOne(dataDir);
    console.log(`all-in-one restart after SIGTERM: listening after ${current.startupMs} ms from spawn`);
    expect(current.app.output()).not.toContain(BANNER);
    const [series] = await trend(current.base, event);
    expect(series!.count).toBe(1);
  });
});
