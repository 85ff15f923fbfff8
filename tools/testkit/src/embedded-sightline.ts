import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, startProcess, type StartedProcess } from './processes';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** `npm start`'s node arguments (the compiled bundle's launcher), read from package.json: what users run. */
export function npmStartNodeArgs(): string[] {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const [command, ...args] = start.split(/\s+/);
  if (command !== 'node') throw new Error(`npm start is not a node command: ${start}`);
  return args;
}

/** The all-in-one service's sources through tsx, as tests run it. */
export const EMBEDDED_SOURCE_NODE_ARGS = ['--import', 'tsx', 'apps/all-in-one/src/main.ts'] as const;

/** Server-mode variables that must not reach the child: any of them would switch a store out of embedded mode. */
export const DISTRIBUTED_VARS = [
  'DATABASE_URL',
  'CLICKHOUSE_URL',
  'CLICKHOUSE_DATABASE',
  'CLICKHOUSE_USER',
  'CLICKHOUSE_PASSWORD',
  'KAFKA_BROKERS',
  'KAFKA_TOPIC_PREFIX',
  'KAFKA_CLIENT_ID',
  'REDIS_URL',
] as const;

/** The all-in-one app's "listening" log line; its port is the first group. */
export const EMBEDDED_LISTENING = /Sightline listening on http:\/\/localhost:(\d+)/;
/** Generous for 2 cores (tsx compiles on the fly, chdb and PGlite start in-process); the real time is logged by callers. */
export const EMBEDDED_STARTUP_TIMEOUT_MS = 45_000;

export interface EmbeddedSightline {
  app: StartedProcess;
  base: string;
  port: number;
  /** From spawn to the "listening" line. */
  startupMs: number;
}

/**
 * The all-in-one app (`npm start`) as a real child process on a free loopback port, with its
 * data under `dataDir` and the given keys, in embedded mode whatever the test environment holds.
 */
export async function startEmbeddedSightline(options: {
  dataDir: string;
  projectApiKey: string;
  personalApiKey: string;
  shutdownTimeoutMs?: number;
  env?: Record<string, string>;
  /** Node flags before the script (e.g. --cpu-prof, which NODE_OPTIONS does not take). */
  nodeArgs?: readonly string[];
  /** `npm start`'s own command (the compiled bundle) instead of the sources through tsx. */
  npmStart?: boolean;
  /**
   * PostgreSQL and ClickHouse servers (e.g. from createTestStores) instead of the embedded PGlite
   * and chdb; the bus stays in-process. The test can then read what the service stored.
   */
  stores?: { postgresUrl: string; clickhouseUrl: string; clickhouseDatabase: string };
}): Promise<EmbeddedSightline> {
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    SIGHTLINE_DATA_DIR: options.dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    SIGHTLINE_PROJECT_API_KEY: options.projectApiKey,
    SIGHTLINE_PERSONAL_API_KEY: options.personalApiKey,
    SHUTDOWN_TIMEOUT_MS: String(options.shutdownTimeoutMs ?? 8000),
    LOG_LEVEL: 'info',
    ...options.env,
  };
  // undefined removes a variable inherited from the test process (child_process skips undefined values).
  for (const name of DISTRIBUTED_VARS) env[name] = undefined;
  if (options.stores) {
    env['DATABASE_URL'] = options.stores.postgresUrl;
    env['CLICKHOUSE_URL'] = options.stores.clickhouseUrl;
    env['CLICKHOUSE_DATABASE'] = options.stores.clickhouseDatabase;
  }
  const started = Date.now();
  const script = options.npmStart ? npmStartNodeArgs() : EMBEDDED_SOURCE_NODE_ARGS;
  const app = await startProcess(process.execPath, [...(options.nodeArgs ?? []), ...script], {
    cwd: ROOT,
    env,
    readyPattern: EMBEDDED_LISTENING,
    timeoutMs: EMBEDDED_STARTUP_TIMEOUT_MS,
  });
  return { app, base: `http://127.0.0.1:${port}`, port, startupMs: Date.now() - started };
}
