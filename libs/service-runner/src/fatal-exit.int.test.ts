import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type StartedProcess } from '@sightline/testkit';

/** Far more than an exit takes; a process still alive then is the failure under test. */
const EXIT_DEADLINE_MS = 30_000;
const FIXTURE = join(__dirname, 'testing', 'failing-service.ts');

function exitOf(app: StartedProcess, deadlineMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'still running'> {
  const { proc } = app;
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve({ code: proc.exitCode, signal: proc.signalCode });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('still running'), deadlineMs);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/**
 * A process that cannot go on ends at once and non-zero, so a supervisor restarts it: with the
 * embedded ClickHouse engine (chdb) and PGlite open, as in the all-in-one service.
 */
describe('a service that cannot go on', () => {
  let dataDir: string;
  let app: StartedProcess | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-fatal-'));
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = (failure: string, nodeArgs: string[] = []) =>
    startProcess(process.execPath, [...nodeArgs, '--import', 'tsx', FIXTURE, failure, dataDir], {
      readyPattern: /failing-service: listening/,
      timeoutMs: 60_000,
      env: { LOG_LEVEL: 'info', HOST: '127.0.0.1', CLICKHOUSE_URL: '', DATABASE_URL: '' },
    });

  it('exits non-zero when its heap runs out of memory (it used to stay alive, not listening)', async () => {
    app = await start('heap', ['--max-old-space-size=96']);
    const exit = await exitOf(app, EXIT_DEADLINE_MS);
    expect(exit).not.toBe('still running');
    const { code, signal } = exit as { code: number | null; signal: NodeJS.Signals | null };
    expect(code !== 0 || signal !== null).toBe(true);
    expect(app.output()).toMatch(/heap out of memory/i);
  });

  it.each(['exception', 'rejection'])('exits 1 on an unhandled %s, saying so in its log', async (failure) => {
    app = await start(failure);
    const exit = await exitOf(app, EXIT_DEADLINE_MS);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(app.output()).toMatch(/"level":60.*nobody (catches|handles) this/);
  });
});
