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

function startImport(args: string[], input?: Buffer): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'import', ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin!.end(input);
  const done = new Promise<Run>((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}
const runImport = (args: string[], input?: Buffer) => startImport(args, input).done;

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
  const received: { events: number; body: Record<string, unknown> }[] = [];
  let answers: { status: number; headers?: Record<string, string>; body?: string }[] = [];
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
          received.push({ events: body.batch.length, body: body as unknown as Record<string, unknown> });
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

  it('importing the same file twice does not duplicate it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'twice.jsonl');
    fs.writeFileSync(file, eventLines(300, 'tw', 'twice_import'));
    for (let i = 0; i < 2; i++) expect((await runImport([file, '--host', service.base, '--api-key', PROJECT_KEY])).code).toBe(0);
    await waitFor(async () => (await importedCount('twice_import')) === 300, { timeoutMs: 30_000, description: 'the imported events' });
    expect(await importedCount('twice_import')).toBe(300);
  });
});
