/**
 * Starting each shared test service in a temp dir: Redis, PostgreSQL, the
 * librdkafka mock cluster (hosted by kcat) and the chdb ClickHouse HTTP front.
 * Each child writes to its own log file (never a pipe: a pipe nobody drains
 * would eventually block the service) and is tied to the jest process, so the
 * kernel stops it if jest dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, spawnTiedToParent } from './processes';
import type { ServiceProcess } from './service-info';
import { waitFor } from './wait-for';

const READY_TIMEOUT_MS = 20_000;
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export interface StartedService {
  process: ServiceProcess;
  child: ChildProcess;
  /** Signal for a stop that cannot wait (jest exiting): no graceful shutdown. */
  urgentSignal: NodeJS.Signals;
}

/** Context shared by the starters: the temp dir and a registry of what was spawned. */
export class ServiceLauncher {
  readonly started: StartedService[] = [];

  constructor(readonly tempDir: string) {
    fs.mkdirSync(this.logDir, { recursive: true });
  }

  get logDir(): string {
    return path.join(this.tempDir, 'logs');
  }

  logFile(name: string): string {
    return path.join(this.logDir, `${name}.log`);
  }

  /** The last lines a service logged, for error messages. */
  logTail(name: string, lines = 30): string {
    try {
      return fs.readFileSync(this.logFile(name), 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Spawns a long-running service with stdout+stderr appended to its log file. */
  spawnService(
    name: string,
    command: string,
    args: string[],
    options: { stopSignal: NodeJS.Signals; urgentSignal: NodeJS.Signals; uid?: number; gid?: number; cwd?: string },
  ): ChildProcess {
    const log = fs.openSync(this.logFile(name), 'a');
    try {
      const child = spawnTiedToParent(command, args, {
        cwd: options.cwd ?? this.tempDir,
        uid: options.uid,
        gid: options.gid,
        stdio: ['ignore', log, log],
        deathSignal: options.urgentSignal,
      });
      child.on('error', (err) => fs.appendFileSync(this.logFile(name), `\n[testkit] spawn failed: ${err.message}\n`));
      if (child.pid !== undefined) {
        this.started.push({ process: { name, pid: child.pid, stopSignal: options.stopSignal }, child, urgentSignal: options.urgentSignal });
      }
      return child;
    } finally {
      fs.closeSync(log);
    }
  }

  /** Waits for `check` to pass, failing fast (with the log) if the service exits. */
  async waitUntilReady<T>(name: string, child: ChildProcess, check: () => Promise<T | false>): Promise<T> {
    try {
      return await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
            throw new ServiceDied(`exited (code ${child.exitCode}, signal ${child.signalCode})`);
          }
          return check();
        },
        { timeoutMs: READY_TIMEOUT_MS, intervalMs: 50, description: `${name} to be ready`, bailOn: (e) => e instanceof ServiceDied },
      );
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(`${name} did not start: ${reason}\n--- ${this.logFile(name)} ---\n${this.logTail(name)}`);
    }
  }
}

class ServiceDied extends Error {}

/** redis-server without persistence. */
export async function startRedis(launcher: ServiceLauncher): Promise<{ redisUrl: string }> {
  const port = await freePort();
  const dir = path.join(launcher.tempDir, 'redis');
  fs.mkdirSync(dir);
  const child = launcher.spawnService(
    'redis',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
    { stopSignal: 'SIGTERM', urgentSignal: 'SIGKILL' },
  );
  await launcher.waitUntilReady('redis', child, () => redisPing(port));
  return { redisUrl: `redis://127.0.0.1:${port}` };
}

/** One raw RESP PING; true on +PONG. */
function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      reply += data.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/** The newest installed PostgreSQL's bin dir (Debian layout), or undefined to use PATH. */
function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0], 'bin') : undefined;
}

/** uid/gid of an OS user from /etc/passwd. */
function osUser(name: string): { uid: number; gid: number } {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`OS user '${name}' not found (install the postgresql package)`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Runs a command to completion with output appended to a log file; rejects on failure. */
function runLogged(
  launcher: ServiceLauncher,
  name: string,
  command: string,
  args: string[],
  options: { uid?: number; gid?: number; cwd?: string },
): Promise<void> {
  const log = fs.openSync(launcher.logFile(name), 'a');
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', log, log] });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} failed (code ${code}, signal ${signal})\n${launcher.logTail(name)}`));
    });
  }).finally(() => fs.closeSync(log));
}

/**
 * A throwaway cluster: initdb (trust auth, superuser `postgres`) and postgres
 * on 127.0.0.1 with fsync off. PostgreSQL refuses to run as root, so as root
 * both run as the `postgres` OS user, which then owns the data dir.
 */
export async function startPostgres(launcher: ServiceLauncher): Promise<{ postgresAdminUrl: string }> {
  const binDir = postgresBinDir();
  const bin = (name: string) => (binDir ? path.join(binDir, name) : name);
  const runAs: { uid?: number; gid?: number } = process.getuid?.() === 0 ? osUser('postgres') : {};
  const dataDir = path.join(launcher.tempDir, 'postgres');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  if (runAs.uid !== undefined && runAs.gid !== undefined) fs.chownSync(dataDir, runAs.uid, runAs.gid);

  await runLogged(
    launcher,
    'postgres',
    bin('initdb'),
    ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'],
    { ...runAs, cwd: dataDir },
  );

  const port = await freePort();
  const settings = {
    listen_addresses: '127.0.0.1',
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: '200',
  };
  const child = launcher.spawnService(
    'postgres',
    bin('postgres'),
    ['-D', dataDir, '-p', String(port), '-k', dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
    // SIGINT is PostgreSQL's "fast" shutdown (SIGTERM would wait for clients); SIGQUIT is immediate.
    { ...runAs, cwd: dataDir, stopSignal: 'SIGINT', urgentSignal: 'SIGQUIT' },
  );
  const postgresAdminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await launcher.waitUntilReady('postgres', child, async () => {
    const client = new Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } finally {
      await client.end().catch(() => undefined);
    }
  });
  return { postgresAdminUrl };
}

/** The mock cluster prints its brokers at start-up, e.g. "… replaced with 127.0.0.1:1,127.0.0.1:2". */
const MOCK_BROKERS_PATTERN = /(?:bootstrap\.servers=|replaced with )(127\.0\.0\.1:\d+(?:,127\.0\.0\.1:\d+)*)/;

/**
 * librdkafka's mock cluster (3 brokers), hosted by a kcat consumer. Topics are
 * auto-created with 4 partitions. kafkajs admin createTopics and idempotent
 * producers do not work against it. `-q` keeps the start-up notice that names
 * the brokers while silencing per-partition chatter.
 */
export async function startKafkaMock(launcher: ServiceLauncher): Promise<{ kafkaBrokers: string[]; kcatPid: number }> {
  const child = launcher.spawnService(
    'kafka-mock',
    'kcat',
    ['-q', '-b', 'localhost:1', '-X', 'test.mock.num.brokers=3', '-C', '-t', 'sightline-mock-anchor'],
    // SIGKILL also ends a process left SIGSTOPped by a test.
    { stopSignal: 'SIGTERM', urgentSignal: 'SIGKILL' },
  );
  const logFile = launcher.logFile('kafka-mock');
  const brokers = await launcher.waitUntilReady('kafka-mock', child, async () => {
    const match = MOCK_BROKERS_PATTERN.exec(fs.readFileSync(logFile, 'utf8'));
    return match ? match[1].split(',') : false;
  });
  return { kafkaBrokers: brokers, kcatPid: child.pid as number };
}

/** The chdb-backed ClickHouse HTTP front (chdb-http-front.ts) as its own node process. */
export async function startClickHouseFront(launcher: ServiceLauncher): Promise<{ clickhouseUrl: string }> {
  const port = await freePort();
  const dataDir = path.join(launcher.tempDir, 'chdb');
  fs.mkdirSync(dataDir);
  const child = launcher.spawnService(
    'chdb-http-front',
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'chdb-http-front.ts'), '--data-dir', dataDir, '--port', String(port)],
    // `--import tsx` resolves from the working directory: the repo root has it.
    { cwd: REPO_ROOT, stopSignal: 'SIGTERM', urgentSignal: 'SIGKILL' },
  );
  const clickhouseUrl = `http://127.0.0.1:${port}`;
  await launcher.waitUntilReady('chdb-http-front', child, async () => {
    const response = await fetch(`${clickhouseUrl}/ping`).catch(() => undefined);
    return (await response?.text()) === 'Ok.\n';
  });
  return { clickhouseUrl };
}
