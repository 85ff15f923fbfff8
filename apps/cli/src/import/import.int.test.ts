/**
 * The import command as a user runs it (a child process), against a stand-in server that
 * misbehaves on purpose and against the real embedded service: retries are waited out, standard
 * input and gzip are read, a changed file is refused on resume, and an import killed with
 * `kill -9` and resumed leaves every event counted exactly once by a trend.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startEmbeddedSightline, stopStartedProcesses, waitFor, type EmbeddedSightline } from '@sightline/testkit';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const PROJECT_KEY = 'phc_import_test_project_key';
const PERSONAL_KEY = 'phx_import_test_personal_key';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startImport(args: string[], input?: Buffer, env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'import', ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin!.end(input);
  const done = new Promise<Run>((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}
const runImport = (args: string[], input?: Buffer, env?: NodeJS.ProcessEnv) => startImport(args, input, env).done;

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-import-'));
const eventLines = (n: number, prefix: string, name = 'imported') =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      event: name,
      distinct_id: `${prefix}-${i % 50}`,
      timestamp: new Date(Date.UTC(2024, 0, 5, 10, 0, i % 60)).toISOString(),
      properties: { i },
    }),
  ).join('\n') + '\n';

describe('sightline import against a stand-in server', () => {
  const received: { events: number; bytes: number; body: Record<string, unknown> }[] = [];
  let answers: { status: number; headers?: Record<string, string>; body?: string }[] = [];
  const receivedEvents = () => received.flatMap((r) => (r.body as unknown as { batch: { event: string; timestamp: string; uuid: string }[] }).batch);
  let server: http.Server;
  let host: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = answers.shift() ?? { status: 200, body: '{"status":1}' };
        if (answer.status === 200) {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as { batch: unknown[] };
          received.push({ events: body.batch.length, bytes: Buffer.concat(chunks).length, body: body as unknown as Record<string, unknown> });
        }
        res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers }).end(answer.body ?? '{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received.length = 0;
    answers = [];
  });

  it('waits out a 429 with Retry-After and then a 503, and sends every event as a historical migration', async () => {
    answers = [
      { status: 429, headers: { 'Retry-After': '1' }, body: '{"type":"throttled_error","detail":"slow down"}' },
      { status: 503, headers: { 'Retry-After': '1' }, body: '{"detail":"transient error, please retry"}' },
    ];
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'events.jsonl'), eventLines(120, 'r'));
    const run = await runImport([path.join(dir, 'events.jsonl'), '--host', host, '--api-key', PROJECT_KEY]);
    expect([run.code, run.stderr]).toEqual([0, expect.stringMatching(/retrying in .*429 slow down[\s\S]*retrying in .*503 transient error/)]);
    expect(received.reduce((n, r) => n + r.events, 0)).toBe(120);
    expect(received[0]!.body).toMatchObject({ api_key: PROJECT_KEY, historical_migration: true });
    expect(run.stdout).toMatch(/sent: 120 {3}accepted: 120 {3}retried requests: 2/);
  });

  it('stops on a 4xx with the service message', async () => {
    answers = [{ status: 401, body: '{"type":"authentication_error","code":"invalid_api_key","detail":"Project API key invalid.","attr":null}' }];
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'events.jsonl'), eventLines(5, 'k'));
    const run = await runImport([path.join(dir, 'events.jsonl'), '--host', host, '--api-key', 'phc_wrong']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the service refused a batch (401): Project API key invalid.');
  });

  it('reads standard input and gzip, reports invalid lines by number without sending them, and exits 2', async () => {
    const text = `${eventLines(3, 's')}{"event":"x"}\nnot json\n`;
    const run = await runImport(['-', '--host', host, '--api-key', PROJECT_KEY, '--batch-bytes', '100000'], gzipSync(text));
    expect(run.code).toBe(2);
    expect(received.reduce((n, r) => n + r.events, 0)).toBe(3);
    expect(run.stdout).toContain('missing_distinct_id: 1');
    expect(run.stdout).toContain('-: lines 4');
    expect(run.stdout).toContain('invalid_json: 1');
    expect(run.stdout).toContain('-: lines 5');
  });

  it('reads times without a zone as UTC on a machine in another zone, or in --timezone', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'local.jsonl');
    const rows = ['2024-01-05 23:30:00', '2024-07-01T10:00:00', '2024-07-01T10:00:00+05'];
    fs.writeFileSync(file, rows.map((timestamp, i) => JSON.stringify({ event: 'e', distinct_id: `u${i}`, timestamp })).join('\n'));
    const run = await runImport([file, '--host', host, '--api-key', PROJECT_KEY], undefined, { TZ: 'Europe/Berlin' });
    expect(receivedEvents().map((e) => e.timestamp)).toEqual(['2024-01-05T23:30:00.000Z', '2024-07-01T10:00:00.000Z', '2024-07-01T05:00:00.000Z']);
    expect([run.code, run.stderr]).toEqual([0, '']);
    received.length = 0;
    const local = await runImport([file, '--host', host, '--api-key', PROJECT_KEY, '--timezone', 'America/New_York'], undefined, { TZ: 'Europe/Berlin' });
    expect(local.code).toBe(0);
    expect(receivedEvents().map((e) => e.timestamp)).toEqual(['2024-01-06T04:30:00.000Z', '2024-07-01T14:00:00.000Z', '2024-07-01T05:00:00.000Z']);
  });

  it('keeps the whole day of a bare --to date, and reports times it refuses or converts', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'range.jsonl');
    const times = [
      '2024-12-30T12:00:00Z',
      '2024-12-31T00:00:00Z',
      '2024-12-31T23:59:59.999Z',
      '2025-01-01T00:00:00Z',
      '2024-12-3',
      '20241231',
      1735603200123456,
    ];
    fs.writeFileSync(file, times.map((timestamp, i) => JSON.stringify({ event: 'e', distinct_id: `u${i}`, timestamp })).join('\n'));
    const run = await runImport([file, '--host', host, '--api-key', PROJECT_KEY, '--from', '2024-12-31', '--to', '2024-12-31']);
    expect(run.code).toBe(2);
    expect(receivedEvents().map((e) => e.timestamp)).toEqual([
      '2024-12-31T00:00:00.000Z',
      '2024-12-31T23:59:59.999Z',
      '2024-12-31T00:00:00.000Z',
      '2024-12-31T00:00:00.123456Z',
    ]);
    expect(run.stdout).toMatch(/invalid_timestamp: 1\n\s+\S+range.jsonl: lines 5/);
    expect(run.stdout).toContain('filtered out by --from/--to: 2');
    expect(run.stdout).toContain('timestamps converted from compact date: 1');
    expect(run.stdout).toContain('timestamps converted from epoch microseconds: 1');
  });

  it('counts --batch-bytes in UTF-8 bytes', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'cjk.jsonl');
    const text = '漢字かな交じり文'.repeat(500);
    fs.writeFileSync(
      file,
      Array.from({ length: 40 }, (_, i) => JSON.stringify({ event: 'e', distinct_id: `u${i}`, timestamp: '2024-01-05T10:00:00Z', properties: { text } })).join(
        '\n',
      ),
    );
    const run = await runImport([file, '--host', host, '--api-key', PROJECT_KEY, '--batch-bytes', '100000']);
    expect(run.code).toBe(0);
    expect(receivedEvents()).toHaveLength(40);
    expect(Math.max(...received.map((r) => r.bytes))).toBeLessThanOrEqual(100_000);
  });

  it('counts the events the service answered as dropped, by reason and line, and exits 2', async () => {
    answers = [{ status: 200, body: JSON.stringify({ status: 1, dropped: [{ index: 1, reason: 'nested_too_deeply' }] }) }];
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'events.jsonl'), eventLines(3, 'd'));
    const run = await runImport([path.join(dir, 'events.jsonl'), '--host', host, '--api-key', PROJECT_KEY]);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/sent: 3 {3}accepted: 2 /);
    expect(run.stdout).toMatch(/dropped by the service: 1/);
    expect(run.stdout).toMatch(/nested_too_deeply: 1\n\s+\S+events.jsonl: lines 2/);
  });

  it('gives the same ids to id-less events whether the file is gzipped or not', async () => {
    const dir = tempDir();
    const text = eventLines(20, 'z');
    fs.writeFileSync(path.join(dir, 'plain.jsonl'), text);
    fs.writeFileSync(path.join(dir, 'packed.jsonl.gz'), gzipSync(text, { level: 9 }));
    expect((await runImport([path.join(dir, 'plain.jsonl'), '--host', host, '--api-key', PROJECT_KEY])).code).toBe(0);
    const plain = receivedEvents().map((e) => e.uuid);
    received.length = 0;
    expect((await runImport([path.join(dir, 'packed.jsonl.gz'), '--host', host, '--api-key', PROJECT_KEY])).code).toBe(0);
    expect(receivedEvents().map((e) => e.uuid)).toEqual(plain);
    expect(new Set(plain).size).toBe(20);
  });

  it('says when nothing matched the format, and which format the records look like', async () => {
    const run = await runImport(['apps/cli/test-fixtures/mixpanel.jsonl', '--host', host, '--api-key', PROJECT_KEY, '--format', 'posthog']);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('no record read so far matched --format posthog. They look like --format mixpanel.');
  });

  it('refuses a host without a scheme as a usage error, and names a host that refuses connections', async () => {
    const started = Date.now();
    const noScheme = await runImport(['apps/cli/test-fixtures/mixpanel.jsonl', '--host', 'localhost:8000', '--api-key', PROJECT_KEY]);
    expect([noScheme.code, noScheme.stderr]).toEqual([1, expect.stringContaining('--host must be a URL starting with http:// or https://')]);
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await runImport([
      'apps/cli/test-fixtures/mixpanel.jsonl',
      '--format',
      'mixpanel',
      '--host',
      `http://127.0.0.1:${port}`,
      '--api-key',
      PROJECT_KEY,
    ]);
    expect(refused.code).toBe(1);
    // The first failures are shown as they happen, then the run stops instead of retrying for minutes.
    expect(refused.stderr).toContain(`retrying in`);
    expect(refused.stderr).toContain(`connection refused by 127.0.0.1:${port}`);
    expect(refused.stderr).toContain(`cannot reach http://127.0.0.1:${port}/batch/`);
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it('refuses to resume a file that changed since its checkpoint', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'events.jsonl');
    const checkpoint = path.join(dir, 'import.checkpoint');
    fs.writeFileSync(file, eventLines(10, 'c'));
    expect((await runImport([file, '--host', host, '--api-key', PROJECT_KEY, '--checkpoint', checkpoint])).code).toBe(0);
    fs.appendFileSync(file, eventLines(1, 'extra'));
    const run = await runImport([file, '--host', host, '--api-key', PROJECT_KEY, '--checkpoint', checkpoint, '--resume']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('changed since the checkpoint was written');
  });
});

describe('sightline import into the embedded service', () => {
  let service: EmbeddedSightline;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDir();
    service = await startEmbeddedSightline({ dataDir, projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY });
  });
  afterAll(async () => {
    await stopStartedProcesses();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const importedCount = async (event: string) => {
    const response = await fetch(`${service.base}/api/environments/1/insights/trend/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ events: [{ id: event, math: 'total' }], date_from: '2024-01-01', date_to: '2024-01-10', refresh: true }),
    });
    return ((await response.json()) as { result: { count: number }[] }).result[0]!.count;
  };

  it('resumes an import killed with kill -9 and counts every event exactly once', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'history.jsonl');
    const checkpoint = path.join(dir, 'history.checkpoint');
    const total = 6_000;
    fs.writeFileSync(file, eventLines(total, 'k9', 'killed_import'));
    const linesDone = () =>
      fs.existsSync(checkpoint) ? (JSON.parse(fs.readFileSync(checkpoint, 'utf8')) as { files: { linesDone: number }[] }).files[0]!.linesDone : 0;
    const target = ['--host', service.base, '--api-key', PROJECT_KEY, '--checkpoint', checkpoint];
    // Small batches, one at a time and rate-limited, so the kill lands mid-run.
    const first = startImport([file, ...target, '--batch-bytes', '20000', '--concurrency', '1', '--rate', '1500']);
    await waitFor(() => linesDone() > 500, { timeoutMs: 60_000, description: 'the first import to get going' });
    first.child.kill('SIGKILL');
    await first.done;
    expect(linesDone()).toBeLessThan(total);
    const resumed = await runImport([file, ...target, '--resume', '--batch-bytes', '200000']);
    expect([resumed.code, resumed.stderr]).toEqual([0, expect.any(String)]);
    // A batch in flight at the kill may be sent again: the service collapses its uuids.
    await waitFor(async () => (await importedCount('killed_import')) === total, { timeoutMs: 60_000, description: 'every imported event in the trend' });
    expect(await importedCount('killed_import')).toBe(total);
  });

  const personOf = async (distinctId: string) => {
    const response = await fetch(`${service.base}/api/environments/1/persons/?distinct_id=${encodeURIComponent(distinctId)}`, {
      headers: { Authorization: `Bearer ${PERSONAL_KEY}` },
    });
    return ((await response.json()) as { results: { uuid: string; distinct_ids: string[]; properties: Record<string, unknown> }[] }).results[0];
  };

  it('imports an Amplitude export zip as downloaded, joining the events from before sign-in to the user', async () => {
    const { ZipFile } = await import('yazl');
    const dir = tempDir();
    const file = path.join(dir, 'amplitude-export.zip');
    const row = (hour: number, extra: Record<string, unknown>) =>
      JSON.stringify({ event_type: 'amp_event', device_id: 'amp-device-1', event_time: `2024-01-05 ${hour}:00:00.000000`, event_properties: {}, ...extra });
    const zip = new ZipFile();
    zip.addBuffer(
      gzipSync(`${row(10, { user_id: null, $insert_id: 'a1' })}\n${row(11, { user_id: null, $insert_id: 'a2' })}\n`),
      '9/9_2024-01-05_10#0.json.gz',
    );
    const signedIn = [
      row(12, { user_id: 'amp-user-1', $insert_id: 'a3', user_properties: { plan: 'pro' } }),
      row(13, { user_id: 'amp-user-1', $insert_id: 'a4' }),
    ];
    zip.addBuffer(gzipSync(`${signedIn.join('\n')}\n`), '9/9_2024-01-05_12#0.json.gz');
    await new Promise<void>((resolve, reject) => {
      zip.outputStream.pipe(fs.createWriteStream(file)).on('close', resolve).on('error', reject);
      zip.end();
    });
    const run = await runImport([file, '--format', 'amplitude', '--host', service.base, '--api-key', PROJECT_KEY]);
    expect([run.code, run.stderr]).toEqual([0, expect.any(String)]);
    // Two signed-in events with the same device: one alias.
    expect(run.stdout).toContain('$create_alias events added: 1');
    await waitFor(async () => (await importedCount('amp_event')) === 4, { timeoutMs: 30_000, description: 'the imported Amplitude events' });
    await waitFor(async () => (await personOf('amp-device-1'))?.distinct_ids.includes('amp-user-1') === true, {
      timeoutMs: 30_000,
      description: 'the device joined to the user',
    });
    const person = await personOf('amp-user-1');
    expect(person).toMatchObject({ properties: expect.objectContaining({ plan: 'pro' }) });
    expect(person!.properties).not.toHaveProperty('$ip');
  });

  it('importing the same file twice does not duplicate it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'twice.jsonl');
    fs.writeFileSync(file, eventLines(300, 'tw', 'twice_import'));
    for (let i = 0; i < 2; i++) expect((await runImport([file, '--host', service.base, '--api-key', PROJECT_KEY])).code).toBe(0);
    await waitFor(async () => (await importedCount('twice_import')) === 300, { timeoutMs: 30_000, description: 'the imported events' });
    expect(await importedCount('twice_import')).toBe(300);
  });
});
