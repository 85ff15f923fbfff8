/**
 * `npm run jobs` as an operator runs it (a child process): through the running embedded
 * service, on its data directory once it is stopped, and on distributed servers. The embedded
 * case is the whole story of a person: `$identify` with `$set` through capture, the person in the
 * persons list, DELETE with delete_events, then the job removing exactly that person's events.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { insertEvents, createAnalyticsStore, migrateClickHouse } from '@sightline/clickhouse';
import { deletePersons } from '@sightline/persons';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import {
  createTestClickHouseDatabase,
  createTestPerson,
  createTestPostgresDatabase,
  DISTRIBUTED_VARS,
  startEmbeddedSightline,
  stopStartedProcesses,
  testEventRow,
  testServices,
  waitFor,
  type EmbeddedSightline,
} from '@sightline/testkit';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const PROJECT_KEY = 'phc_jobs_test_project_key';
const PERSONAL_KEY = 'phx_jobs_test_personal_key';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run jobs -- <args>` (the script's command line, without npm in between). */
function runJobs(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const name of DISTRIBUTED_VARS) delete childEnv[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'jobs', ...args], {
    cwd: ROOT,
    env: { ...childEnv, ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('npm run jobs against the embedded service', () => {
  let dataDir: string;
  let service: EmbeddedSightline;
  const env = () => ({ SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_PERSONAL_API_KEY: PERSONAL_KEY, PORT: '1' });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-jobs-'));
    service = await startEmbeddedSightline({ dataDir, projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY });
  });
  afterAll(async () => {
    await stopStartedProcesses();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async (method: string, urlPath: string, body?: unknown) => {
    const response = await fetch(`${service.base}${urlPath}`, {
      method,
      headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
  };
  const capture = async (body: unknown) => {
    const response = await fetch(`${service.base}/capture/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
  };
  /** Events per distinct id, from a trend computed now (never the cached answer). */
  const eventsByDistinctId = async () => {
    const { body } = await api('POST', '/api/environments/1/insights/trend/', {
      events: [{ id: '$pageview' }, { id: '$identify' }],
      breakdown: 'distinct_id',
      breakdown_type: 'event_metadata',
      display: 'ActionsTable',
      date_from: '-1d',
      refresh: true,
    });
    const counts: Record<string, number> = {};
    for (const r of body!['result'] as { breakdown_value: string; aggregated_value: number }[]) {
      counts[r.breakdown_value] = (counts[r.breakdown_value] ?? 0) + r.aggregated_value;
    }
    return counts;
  };
  const personOf = async (distinctId: string) =>
    ((await api('GET', `/api/environments/1/persons/?distinct_id=${distinctId}`)).body!['results'] as { id: number; properties: unknown }[])[0];

  it('$identify with $set shows in the persons list; the job removes exactly the deleted person’s events', async () => {
    await capture({
      api_key: PROJECT_KEY,
      event: '$identify',
      distinct_id: 'alice@example.com',
      properties: { $anon_distinct_id: 'anon-alice', $set: { email: 'alice@example.com', plan: 'pro' } },
    });
    for (const distinctId of ['alice@example.com', 'anon-alice', 'bob', 'bob'])
      await capture({ api_key: PROJECT_KEY, event: '$pageview', distinct_id: distinctId });
    await waitFor(async () => (await eventsByDistinctId())['bob'] === 2 && (await personOf('anon-alice')) !== undefined, { timeoutMs: 30_000 });
    const list = await api('GET', '/api/environments/1/persons/?search=alice');
    expect(list.body).toMatchObject({
      count: 1,
      results: [{ name: 'alice@example.com', distinct_ids: ['alice@example.com', 'anon-alice'], properties: { email: 'alice@example.com', plan: 'pro' } }],
    });
    const alice = (list.body!['results'] as { id: number }[])[0]!;

    expect((await api('DELETE', `/api/environments/1/persons/${alice.id}/?delete_events=true`)).status).toBe(204);
    const status = await runJobs(['status'], env());
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout).toContain(`through the running embedded service at ${service.base}`);
    expect(status.stdout).toMatch(/person-events-deletion: cron "0 5 \* \* 0" \(UTC\), next run \d{4}-\d\d-\d\dT05:00:00.000Z/);
    expect(status.stdout).toContain('pending person-event deletions: 1');
    expect(status.stdout).toContain('(alice@example.com, anon-alice)');

    const run = await runJobs(['run', 'person-events-deletion'], env());
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('batch 1: 1/1 tasks done, 3 events deleted');
    expect(run.stdout).toMatch(/done in [\d.]+ s: 1 task\(s\), 3 event\(s\) deleted/);
    expect(await eventsByDistinctId()).toEqual({ bob: 2 });
    expect((await runJobs(['status'], env())).stdout).toContain('pending person-event deletions: 0');
  });

  it('fails with a clear message: an unknown job, a missing key, a usage error', async () => {
    const unknown = await runJobs(['run', 'no-such-job'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Unknown job "no-such-job" (known: person-events-deletion)');
    const keyless = await runJobs(['status'], { ...env(), SIGHTLINE_PERSONAL_API_KEY: undefined });
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toContain('holds the data directory; pass its personal API key');
    const usage = await runJobs(['start'], env());
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('unknown command "start"');
  });

  it('works on the data directory once the service is stopped', async () => {
    const bob = (await personOf('bob'))!;
    expect((await api('DELETE', `/api/environments/1/persons/${bob.id}/?delete_events=true`)).status).toBe(204);
    await service.app.stop();
    const run = await runJobs(['run', 'person-events-deletion'], env());
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`through the data directory ${dataDir} (the service is not running)`);
    expect(run.stdout).toContain('2 event(s) deleted');
    service = await startEmbeddedSightline({ dataDir, projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY });
    expect(await eventsByDistinctId()).toEqual({});
  });
});

describe('npm run jobs against distributed servers', () => {
  it('reads DATABASE_URL, CLICKHOUSE_URL and REDIS_URL', async () => {
    const pg = await createTestPostgresDatabase('jobs_cli');
    const chDb = await createTestClickHouseDatabase('jobs_cli');
    const db = await createMetadataStore({ url: pg.url });
    const ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    try {
      await migratePostgres(db);
      await migrateClickHouse(ch);
      const person = await createTestPerson({ db, ch }, { distinctIds: ['carol'] });
      await insertEvents(ch, [testEventRow({ event: 'e', atMs: Date.now(), distinctId: 'carol', personId: person.uuid })]);
      await deletePersons({ db, ch }, 1, [person.id], { deleteEvents: true, requestedBy: null });
      // A Redis database of its own: other suites' workers register the scheduler in database 0 of the shared server.
      const redis = new URL(testServices().redisUrl);
      redis.pathname = '/11';
      const env = { DATABASE_URL: pg.url, CLICKHOUSE_URL: chDb.url, CLICKHOUSE_DATABASE: chDb.database, REDIS_URL: redis.toString() };
      const status = await runJobs(['status'], env);
      expect(status).toMatchObject({ code: 0, stderr: '' });
      expect(status.stdout).toContain('through the servers of DATABASE_URL and CLICKHOUSE_URL');
      // No worker registered the scheduler in this Redis.
      expect(status.stdout).toContain('next run not scheduled (no worker has registered it)');
      expect(status.stdout).toContain('pending person-event deletions: 1');
      const run = await runJobs(['run', 'person-events-deletion'], env);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain('1 task(s), 1 event(s) deleted');
    } finally {
      await ch.close();
      await db.close();
      await pg.drop();
      await chDb.drop();
    }
  });
});
