// End to end, distributed mode: api, worker and gateway as three separate real processes
// on the shared test services (PostgreSQL, the Kafka mock cluster, the ClickHouse front,
// Redis), each with a fresh database / topic prefix. Events go in through the gateway,
// across Kafka, through the worker into ClickHouse, and come out of the api's trends,
// including across a worker restart.
import path from 'node:path';
import { Client } from 'pg';
import { createRedisInvalidation } from '@sightline/bus';
import { FLAG_CHANGES_CHANNEL } from '@sightline/flag-store';
import {
  createTestClickHouseDatabase,
  createTestPostgresDatabase,
  freePort,
  postJson,
  startProcess,
  testServices,
  uniqueName,
  waitFor,
  type StartedProcess,
  type TestClickHouseDatabase,
  type TestPostgresDatabase,
} from '@sightline/testkit';

const ROOT = path.resolve(__dirname, '..');
const PROJECT_KEY = 'phc_e2e_distributed_project_key';
const PERSONAL_KEY = 'phx_e2e_distributed_personal_key';
const SHUTDOWN_TIMEOUT_MS = 15_000;
/** Each app compiles through tsx on 2 cores; the worker also joins three consumer groups. */
const START_TIMEOUT_MS = 60_000;
/** Worker writes are asynchronous: Kafka consumer group joins and fetches take seconds. */
const DELIVERY_TIMEOUT_MS = 60_000;
const DAY_MS = 86_400_000;

type AppName = 'api' | 'worker' | 'gateway';

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface App {
  name: AppName;
  proc: StartedProcess;
  base: string;
  startupMs: number;
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
}

function onDay(series: TrendSeries, day: string): number {
  const i = series.days.indexOf(day);
  if (i < 0) throw new Error(`day ${day} not in ${JSON.stringify(series.days)}`);
  return series.data[i]!;
}

describe('distributed mode (api + worker + gateway) end to end', () => {
  let pg: TestPostgresDatabase | undefined;
  let ch: TestClickHouseDatabase | undefined;
  let commonEnv: Record<string, string | undefined>;
  const apps: Partial<Record<AppName, App>> = {};
  const live = uniqueName('e2e_live');
  const historical = uniqueName('e2e_historical');

  async function startApp(name: AppName, extraEnv: Record<string, string> = {}): Promise<App> {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const started = Date.now();
    const proc = await startProcess(process.execPath, ['--import', 'tsx', `apps/${name}/src/main.ts`], {
      cwd: ROOT,
      env: { ...commonEnv, PORT: String(port), ...extraEnv },
      readyUrl: `${base}/_ready`,
      timeoutMs: START_TIMEOUT_MS,
    });
    const app = { name, proc, base, startupMs: Date.now() - started };
    console.log(`${name} ready after ${app.startupMs} ms from spawn`);
    return app;
  }

  const app = (name: AppName): App => {
    const a = apps[name];
    if (!a) throw new Error(`${name} is not running (an earlier step failed)`);
    return a;
  };

  async function trend(...events: string[]): Promise<TrendSeries[]> {
    const { status, body } = await postJson(
      `${app('api').base}/api/environments/1/insights/trend/`,
      // Polled until the pipeline delivers: refresh, or the answer cache would repeat the first one.
      { events: events.map((id) => ({ id, math: 'total' })), refresh: true },
      { authorization: `Bearer ${PERSONAL_KEY}` },
    );
    if (status !== 200) throw new Error(`trend answered ${status}: ${JSON.stringify(body)}`);
    return body.result as TrendSeries[];
  }

  const capture = (event: string, distinctId: string) =>
    postJson(`${app('gateway').base}/capture/`, { api_key: PROJECT_KEY, event, distinct_id: distinctId, properties: { $lib: 'e2e' } });

  beforeAll(async () => {
    [pg, ch] = await Promise.all([createTestPostgresDatabase('e2e_distributed'), createTestClickHouseDatabase('e2e_distributed')]);
    const services = testServices();
    commonEnv = {
      DATABASE_URL: pg.url,
      CLICKHOUSE_URL: ch.url,
      CLICKHOUSE_DATABASE: ch.database,
      KAFKA_BROKERS: services.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: `${uniqueName('e2e')}_`,
      REDIS_URL: services.redisUrl,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      // The restarted worker's join waits out its predecessor's session on the mock broker
      // (seen: ready after 28 s with the 30 s default).
      WORKER_KAFKA_SESSION_TIMEOUT_MS: '6000',
      // Not for the distributed apps.
      SIGHTLINE_DATA_DIR: undefined,
      SIGHTLINE_PROJECT_API_KEY: undefined,
      SIGHTLINE_PERSONAL_API_KEY: undefined,
    };
  });

  afterAll(async () => {
    await Promise.all(Object.values(apps).map((a) => a.proc.stop()));
    await Promise.allSettled([pg?.drop(), ch?.drop()]);
  });

  it('starts the api (migrations, bootstrap), then the worker and the gateway, each ready', async () => {
    // The api first: it migrates and bootstraps the keys.
    apps.api = await startApp('api', {
      SIGHTLINE_PROJECT_API_KEY: PROJECT_KEY,
      SIGHTLINE_PERSONAL_API_KEY: PERSONAL_KEY,
      // An hour: only the worker's announcement can refresh a cached person in decide.
      FLAGS_PERSON_CACHE_MS: '3600000',
    });
    expect(apps.api.proc.output()).toContain(`project API key:   ${PROJECT_KEY}`);
    expect(apps.api.proc.output()).toMatch(/api listening on http:\/\/localhost:\d+/);
    [apps.worker, apps.gateway] = await Promise.all([startApp('worker'), startApp('gateway')]);

    for (const name of ['api', 'worker', 'gateway'] as const) {
      const response = await fetch(`${app(name).base}/_ready`);
      expect({ name, status: response.status, body: await response.json() }).toEqual({ name, status: 200, body: expect.objectContaining({ status: 'ready' }) });
    }

    const projects = await fetch(`${app('api').base}/api/projects/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
    expect(projects.status).toBe(200);
    expect(((await projects.json()) as { results: unknown[] }).results).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 1, api_token: PROJECT_KEY })]),
    );
  });

  it('answers /decide from the api process and picks up a flag change broadcast over Redis within a second', async () => {
    const decide = async () => {
      const { status, body } = await postJson(`${app('api').base}/decide/?v=3`, { api_key: PROJECT_KEY, distinct_id: 'user-1' });
      expect(status).toBe(200);
      return body.featureFlags as Record<string, unknown>;
    };
    expect(await decide()).not.toHaveProperty('e2e-flag'); // definitions of project 1 now cached
    const db = new Client({ connectionString: pg!.url });
    await db.connect();
    try {
      await db.query(`INSERT INTO feature_flags (team_id, key, filters) VALUES (1, 'e2e-flag', '{"groups":[{"properties":[],"rollout_percentage":100}]}')`);
    } finally {
      await db.end();
    }
    // What the management routes do after a write: announce it to every api process.
    const channel = createRedisInvalidation(testServices().redisUrl, { channel: FLAG_CHANGES_CHANNEL });
    try {
      await channel.publish(1);
    } finally {
      await channel.close();
    }
    await waitFor(async () => (await decide())['e2e-flag'] === true, { timeoutMs: 1000, intervalMs: 50, description: 'the new flag in decide' });
  });

  it('carries captures from the gateway through Kafka and the worker into the api trends', async () => {
    const today = utcDay(Date.now());
    const twoDaysAgoMs = Date.now() - 2 * DAY_MS;

    expect(await capture(live, 'user-1')).toEqual({ status: 200, body: { status: 1 } });
    const batch = await postJson(`${app('gateway').base}/batch/`, {
      api_key: PROJECT_KEY,
      batch: [
        { event: live, distinct_id: 'user-2', properties: {} },
        { event: live, distinct_id: 'user-3', properties: {} },
        { event: live, properties: { note: 'no distinct_id: dropped' } },
      ],
    });
    // The answer names the event it dropped (PostHog's clients ignore the extra field).
    expect(batch).toEqual({ status: 200, body: { status: 1, dropped: [{ index: 2, reason: 'missing_distinct_id' }] } });
    const migration = await postJson(`${app('gateway').base}/batch/`, {
      api_key: PROJECT_KEY,
      historical_migration: true,
      batch: [0, 1, 2, 3].map((i) => ({
        event: historical,
        distinct_id: `imported-${i}`,
        timestamp: new Date(twoDaysAgoMs + i * 1000).toISOString(),
        properties: { source: 'import' },
      })),
    });
    expect(migration).toEqual({ status: 200, body: { status: 1 } });

    const waitStarted = Date.now();
    const [liveSeries, historicalSeries] = await waitFor(
      async () => {
        const result = await trend(live, historical);
        expect(result.map((s) => s.count)).toEqual([3, 4]);
        return result;
      },
      { timeoutMs: DELIVERY_TIMEOUT_MS, intervalMs: 250, description: 'the worker to write the captured events' },
    );
    console.log(`gateway → Kafka → worker → ClickHouse → api: visible after ${Date.now() - waitStarted} ms`);
    expect(onDay(liveSeries!, today)).toBe(3);
    expect(onDay(historicalSeries!, utcDay(twoDaysAgoMs))).toBe(4);
    expect(onDay(historicalSeries!, today)).toBe(0);

    // Still exact a moment later: nothing is written twice.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await trend(live, historical)).map((s) => s.count)).toEqual([3, 4]);

    const metrics = await (await fetch(`${app('gateway').base}/metrics`)).text();
    const accepted = [...metrics.matchAll(/^ingest_events_accepted_total(?:\{[^}]*\})? (\d+(?:\.\d+)?)$/gm)].map((m) => Number(m[1]));
    expect(accepted.length).toBeGreaterThan(0);
    // 1 single + 2 valid of the batch + 4 migrated.
    expect(accepted.reduce((a, b) => a + b, 0)).toBe(7);

    for (const name of ['api', 'worker', 'gateway'] as const) {
      expect({ name, status: (await fetch(`${app(name).base}/_ready`)).status }).toEqual({ name, status: 200 });
    }
  });

  it('refuses a reset project API key in the gateway and the api at once (announced over Redis)', async () => {
    const auth = { authorization: `Bearer ${PERSONAL_KEY}` };
    const created = await postJson(`${app('api').base}/api/projects/`, { name: 'Reset me' }, auth);
    expect(created.status).toBe(201);
    const old = created.body.api_token as string;
    const answers = async (token: string) => ({
      capture: (await postJson(`${app('gateway').base}/capture/`, { api_key: token, event: 'reset-probe', distinct_id: 'd' })).status,
      flags: (await postJson(`${app('api').base}/flags/?v=2`, { token, distinct_id: 'd' })).status,
    });
    // Both processes' token caches now hold the old key, for five minutes unless told otherwise.
    expect(await answers(old)).toEqual({ capture: 200, flags: 200 });
    const reset = await fetch(`${app('api').base}/api/projects/${created.body.id}/reset_token/`, { method: 'PATCH', headers: auth });
    expect(reset.status).toBe(200);
    const fresh = ((await reset.json()) as { api_token: string }).api_token;
    await waitFor(async () => JSON.stringify(await answers(old)) === JSON.stringify({ capture: 401, flags: 401 }), {
      timeoutMs: 5000,
      intervalMs: 50,
      description: 'the old key refused by the gateway and the api',
    });
    expect(await answers(fresh)).toEqual({ capture: 200, flags: 200 });
  });

  it("a $set ingested through the gateway and the worker reaches decide within a second of the worker's commit (Redis announcement)", async () => {
    const distinctId = uniqueName('e2e-person');
    const db = new Client({ connectionString: pg!.url });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO feature_flags (team_id, key, filters) VALUES (1, 'e2e-pro', '{"groups":[{"properties":[{"key":"plan","value":"pro","type":"person"}]}]}')`,
      );
      const channel = createRedisInvalidation(testServices().redisUrl, { channel: FLAG_CHANGES_CHANNEL });
      await channel.publish(1).finally(() => channel.close());
      const proFlag = async () => {
        const { status, body } = await postJson(`${app('api').base}/decide/?v=3`, { api_key: PROJECT_KEY, distinct_id: distinctId });
        expect(status).toBe(200);
        return (body.featureFlags as Record<string, unknown>)['e2e-pro'];
      };
      await waitFor(async () => (await proFlag()) === false, { timeoutMs: 1000, intervalMs: 50, description: 'the new flag in decide' });
      // No person yet: that answer is now cached for an hour.
      const captured = await postJson(`${app('gateway').base}/capture/`, {
        api_key: PROJECT_KEY,
        event: '$pageview',
        distinct_id: distinctId,
        properties: { $set: { plan: 'pro' } },
      });
      expect(captured).toEqual({ status: 200, body: { status: 1 } });
      await waitFor(
        async () => {
          const { rows } = await db.query(
            `SELECT p.properties->>'plan' AS plan FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = 1 AND d.distinct_id = $1`,
            [distinctId],
          );
          expect(rows[0]?.plan).toBe('pro');
        },
        { timeoutMs: DELIVERY_TIMEOUT_MS, intervalMs: 20, description: 'the worker to commit the person' },
      );
      const committedAt = Date.now();
      await waitFor(async () => (await proFlag()) === true, { timeoutMs: 1000, intervalMs: 20, description: 'the $set in decide' });
      expect(Date.now() - committedAt).toBeLessThan(1000);
    } finally {
      await db.end();
    }
  });

  it('loses nothing across a worker restart: Kafka holds what the gateway accepts meanwhile', async () => {
    const event = uniqueName('e2e_restart');
    const worker = app('worker');
    const exit = exited(worker.proc);
    const signalledAt = Date.now();
    worker.proc.kill('SIGTERM');
    const { code, signal } = await exit;
    console.log(`worker stopped with ${code ?? signal} ${Date.now() - signalledAt} ms after SIGTERM`);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    await worker.proc.stop();
    delete apps.worker;

    // No worker: the gateway still accepts (Kafka holds the events).
    const N = 10;
    for (let i = 0; i < N; i++) expect(await capture(event, `restart-${i}`)).toEqual({ status: 200, body: { status: 1 } });
    const batch = await postJson(`${app('gateway').base}/batch/`, {
      api_key: PROJECT_KEY,
      batch: [0, 1, 2, 3, 4].map((i) => ({ event, distinct_id: `restart-batch-${i}`, properties: {} })),
    });
    expect(batch).toEqual({ status: 200, body: { status: 1 } });
    // Nobody writes them yet.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await trend(event))[0]!.count).toBe(0);

    apps.worker = await startApp('worker');
    const waitStarted = Date.now();
    await waitFor(
      async () => {
        expect((await trend(event))[0]!.count).toBe(N + 5);
      },
      { timeoutMs: DELIVERY_TIMEOUT_MS, intervalMs: 250, description: 'the new worker to write the events held in Kafka' },
    );
    console.log(`events captured while the worker was down: visible ${Date.now() - waitStarted} ms after the new worker was ready`);
    // Neither these nor the events from before the restart are lost or counted twice.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await trend(event, live, historical)).map((s) => s.count)).toEqual([N + 5, 3, 4]);

    for (const name of ['api', 'worker', 'gateway'] as const) {
      expect({ name, status: (await fetch(`${app(name).base}/_ready`)).status }).toEqual({ name, status: 200 });
    }
  });
});
