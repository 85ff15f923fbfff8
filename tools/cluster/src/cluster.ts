/**
 * A Sightline cluster on this machine: PostgreSQL, Redis, librdkafka's 3-broker Kafka mock,
 * ClickHouse (a server at CLICKHOUSE_URL, else the chdb HTTP front), N gateways, M workers and
 * K api processes (each its own `node apps/<role>/src/main.ts`, as `npm run start:<role>`
 * starts it) and nginx in front of the gateways and api processes, all on loopback. Used by
 * `npm run start:cluster` (main.ts) and by the fault test (test/cluster-faults.slow.test.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { topicNames } from '@sightline/bus';
import {
  freePort,
  REPO_ROOT,
  ServiceLauncher,
  signalQuietly,
  startClickHouseFront,
  startKafkaMockCluster,
  startNginx,
  startPostgres,
  startRedis,
  type RunningNginx,
} from '@sightline/local-services';
import { writeLocalNginxConfig } from './nginx-config';
import { APP_ROLES, type AppRole, type ClusterFile, type ClusterKeys, type ClusterProcessInfo } from './cluster-file';

export interface ClusterOptions {
  /** Data, logs, nginx's configuration and cluster.json. Kept between runs (Kafka's messages are not: the mock is in memory). */
  dir: string;
  gateways: number;
  workers: number;
  apis: number;
  /** Partitions of each topic: the most workers that consume live events at once. */
  partitions: number;
  /** The front address's port; 0 picks a free one. */
  frontPort: number;
  /** A ClickHouse server to use (CLICKHOUSE_URL and friends); absent: the chdb HTTP front. */
  clickhouse?: { url: string; database?: string; user?: string; password?: string };
  /** Environment of every app process (e.g. LOG_LEVEL), under what the cluster sets itself. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Settings per role, over everything else (the fault test's short session timeout, say). */
  roleEnv?: Partial<Record<AppRole, Record<string, string>>>;
  /** How long an app may take to answer /_ready after its start (tsx compiles it on the way). */
  appReadyTimeoutMs?: number;
  /** Told about processes starting, stopping and exiting on their own. */
  onEvent?: (message: string) => void;
}

export interface LocalCluster {
  readonly dir: string;
  readonly frontUrl: string;
  readonly keys: ClusterKeys;
  /** The stores' addresses, as the apps get them. */
  readonly env: Record<string, string>;
  processes(): ClusterProcessInfo[];
  process(name: string): ClusterProcessInfo;
  /** Starts one more app process (a gateway or api joins the front once ready). */
  add(role: AppRole): Promise<ClusterProcessInfo>;
  /** Takes an app out of the front, then stops it gracefully (SIGTERM). */
  stop(name: string): Promise<void>;
  /** Sends a signal and waits for the exit; the process stays in the front (a crash, as nginx sees it). */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Starts an app that exited again, on the same port; it rejoins the front. */
  restart(name: string): Promise<ClusterProcessInfo>;
  /** Stops Redis or PostgreSQL and starts it again on the same port and data. */
  restartService(name: 'redis' | 'postgres'): Promise<void>;
  /** Writes cluster.json (done after every change; `controller` is what main.ts adds). */
  writeFile(controller?: ClusterFile['controller']): void;
  /** Stops everything: nginx, the gateways and api processes, the workers, then the stores. */
  close(): Promise<void>;
}

interface AppProcess {
  role: AppRole;
  index: number;
  port: number;
  child: ChildProcess;
  state: 'starting' | 'running' | 'exited' | 'stopped';
  /** In nginx's upstream (gateways and api processes). */
  inFront: boolean;
  exit?: string;
}

const SHUTDOWN_TIMEOUT_MS = 15_000;
const DEFAULT_APP_READY_TIMEOUT_MS = 120_000;
const SERVICE_READY_TIMEOUT_MS = 60_000;

const appName = (role: AppRole, index: number) => `${role}:${index}`;
/** Log files and the launcher's names cannot hold the colon everywhere: gateway:2 → gateway-2. */
const launcherName = (role: AppRole, index: number) => `${role}-${index}`;

function loadKeys(dir: string): ClusterKeys {
  const file = path.join(dir, 'keys.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as ClusterKeys;
  // The api processes bootstrap the instance with these on first start; kept for later runs on the same data.
  const keys = { projectApiKey: `phc_${randomBytes(16).toString('hex')}`, personalApiKey: `phx_${randomBytes(20).toString('hex')}` };
  fs.writeFileSync(file, JSON.stringify(keys, null, 2) + '\n', { mode: 0o600 });
  return keys;
}

/**
 * PostgreSQL runs as the `postgres` user when this process is root: it must be able to enter
 * every directory down to its data dir.
 */
function assertReachableByOthers(dir: string): void {
  if (process.getuid?.() !== 0) return;
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if ((fs.statSync(at).mode & 0o001) === 0) {
      throw new Error(
        `${at} is closed to other users, so PostgreSQL (run as the postgres user, since this runs as root) cannot reach ${dir}: choose --dir elsewhere (e.g. under /tmp)`,
      );
    }
    if (at === path.dirname(at)) return;
  }
}

async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function startCluster(options: ClusterOptions): Promise<LocalCluster> {
  const dir = path.resolve(options.dir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  fs.chmodSync(dir, 0o755);
  assertReachableByOthers(dir);
  const say = options.onEvent ?? (() => undefined);
  const launcher = new ServiceLauncher(dir, SERVICE_READY_TIMEOUT_MS);
  const appReadyTimeoutMs = options.appReadyTimeoutMs ?? DEFAULT_APP_READY_TIMEOUT_MS;
  const keys = loadKeys(dir);
  const apps: AppProcess[] = [];
  let nginx: RunningNginx | undefined;
  let closed = false;
  const ports = { front: options.frontPort || (await freePort()), nginxHealth: await freePort(), redis: 0, postgres: 0 };

  const stopAll = async () => {
    const order = [...launcher.started].reverse();
    for (const { process: p } of order) signalQuietly(p.pid, 'SIGCONT');
    await Promise.allSettled(order.map((s) => launcher.stop(s.process.name, 5000)));
  };

  const env: Record<string, string> = {};
  try {
    const topics = topicNames('');
    const [redis, postgres, kafka, clickhouse] = await Promise.all([
      startRedis(launcher, { appendOnly: true }),
      startPostgres(launcher, { durable: true }),
      startKafkaMockCluster(launcher, { brokers: 3, partitions: options.partitions, topics: [topics.events, topics.eventsHistorical, topics.deadLetter] }),
      options.clickhouse ? Promise.resolve({ clickhouseUrl: options.clickhouse.url }) : startClickHouseFront(launcher),
    ]);
    ports.redis = redis.port;
    ports.postgres = postgres.port;
    Object.assign(env, {
      DATABASE_URL: await createDatabase(postgres.postgresAdminUrl, 'sightline'),
      REDIS_URL: redis.redisUrl,
      KAFKA_BROKERS: kafka.kafkaBrokers.join(','),
      CLICKHOUSE_URL: clickhouse.clickhouseUrl,
      CLICKHOUSE_DATABASE: options.clickhouse?.database ?? 'default',
      CLICKHOUSE_USER: options.clickhouse?.user ?? 'default',
      CLICKHOUSE_PASSWORD: options.clickhouse?.password ?? '',
    });
  } catch (error) {
    await stopAll();
    throw error;
  }

  const envFor = (role: AppRole, port: number): NodeJS.ProcessEnv => ({
    ...options.baseEnv,
    ...env,
    HOST: '127.0.0.1',
    PORT: String(port),
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    KAFKA_TOPIC_PREFIX: '',
    // Not settings of the distributed apps.
    SIGHTLINE_DATA_DIR: undefined,
    ...(role === 'api'
      ? {
          SIGHTLINE_PROJECT_API_KEY: keys.projectApiKey,
          SIGHTLINE_PERSONAL_API_KEY: keys.personalApiKey,
          // nginx on loopback: its X-Forwarded-For names the client.
          TRUSTED_PROXIES: 'loopback',
        }
      : {}),
    ...options.roleEnv?.[role],
  });

  const find = (name: string): AppProcess => {
    const app = apps.find((a) => appName(a.role, a.index) === name);
    if (!app) throw new Error(`no process named ${name} (processes: ${apps.map((a) => appName(a.role, a.index)).join(', ')})`);
    return app;
  };

  const infoOf = (app: AppProcess): ClusterProcessInfo => ({
    name: appName(app.role, app.index),
    role: app.role,
    pid: app.child.pid ?? 0,
    port: app.port,
    url: `http://127.0.0.1:${app.port}`,
    log: launcher.logFile(launcherName(app.role, app.index)),
    state: app.state,
    ...(app.exit ? { exit: app.exit } : {}),
  });

  const serviceInfos = (): ClusterProcessInfo[] =>
    launcher.started
      .filter((s) => !/^(gateway|worker|api)-\d+$/.test(s.process.name))
      .map((s) => ({
        name: s.process.name,
        role: s.process.name,
        pid: s.process.pid,
        ...(s.process.name === 'nginx' ? { port: ports.front, url: `http://127.0.0.1:${ports.front}` } : {}),
        ...(s.process.name === 'redis' ? { port: ports.redis, url: env.REDIS_URL } : {}),
        ...(s.process.name === 'postgres' ? { port: ports.postgres, url: env.DATABASE_URL } : {}),
        ...(s.process.name === 'kafka' ? { url: env.KAFKA_BROKERS } : {}),
        ...(s.process.name === 'chdb-http-front' ? { url: env.CLICKHOUSE_URL } : {}),
        log: launcher.logFile(s.process.name),
        state: s.child.exitCode === null && s.child.signalCode === null ? 'running' : 'exited',
      }));

  const nginxSettings = () => ({
    listenPort: ports.front,
    healthPort: ports.nginxHealth,
    gatewayPorts: apps.filter((a) => a.role === 'gateway' && a.inFront).map((a) => a.port),
    apiPorts: apps.filter((a) => a.role === 'api' && a.inFront).map((a) => a.port),
    dir: path.join(dir, 'nginx'),
  });
  const reloadFront = async () => {
    if (!nginx) return;
    writeLocalNginxConfig(nginxSettings());
    await nginx.reload();
  };

  const writeFile = (controller: ClusterFile['controller'] = null) => {
    const file: ClusterFile = {
      frontUrl: `http://127.0.0.1:${ports.front}`,
      dir,
      keys,
      partitions: options.partitions,
      env,
      controller,
      processes: [...serviceInfos(), ...apps.map(infoOf)],
    };
    const target = path.join(dir, 'cluster.json');
    fs.writeFileSync(`${target}.tmp`, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
    fs.renameSync(`${target}.tmp`, target);
  };
  let controllerInfo: ClusterFile['controller'] = null;
  const changed = () => {
    if (!closed) writeFile(controllerInfo);
  };

  /** Spawns an app on `port` and waits until it answers /_ready. */
  const launch = async (role: AppRole, index: number, port: number): Promise<AppProcess> => {
    const name = launcherName(role, index);
    // The worker's GC setting, as `npm run start:worker` gives it (docs/scaling.md).
    const nodeFlags = role === 'worker' ? ['--max-semi-space-size=64'] : [];
    const child = launcher.spawnService(name, process.execPath, [...nodeFlags, '--import', 'tsx', `apps/${role}/src/main.ts`], {
      cwd: REPO_ROOT,
      env: envFor(role, port),
      stopSignal: 'SIGTERM',
      urgentSignal: 'SIGKILL',
    });
    const existing = apps.find((a) => a.role === role && a.index === index);
    const app: AppProcess = existing ?? { role, index, port, child, state: 'starting', inFront: false };
    Object.assign(app, { child, state: 'starting', exit: undefined });
    if (!existing) apps.push(app);
    child.once('exit', (code, signal) => {
      if (app.child !== child) return;
      if (app.state !== 'stopped') app.state = 'exited';
      app.exit = signal ? `signal ${signal}` : `code ${code}`;
      if (!closed) say(`${appName(role, index)} (pid ${child.pid}) exited: ${app.exit}`);
      changed();
    });
    changed();
    await launcher.waitUntilReady(
      name,
      child,
      async () => {
        const response = await fetch(`http://127.0.0.1:${port}/_ready`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.status === 200;
      },
      appReadyTimeoutMs,
    );
    app.state = 'running';
    say(`${appName(role, index)} ready on http://127.0.0.1:${port} (pid ${child.pid})`);
    return app;
  };

  const nextIndex = (role: AppRole) => Math.max(0, ...apps.filter((a) => a.role === role).map((a) => a.index)) + 1;

  const add = async (role: AppRole): Promise<ClusterProcessInfo> => {
    if (closed) throw new Error('the cluster is stopping');
    if (!APP_ROLES.includes(role)) throw new Error(`unknown role ${role} (roles: ${APP_ROLES.join(', ')})`);
    const app = await launch(role, nextIndex(role), await freePort());
    if (role !== 'worker') {
      app.inFront = true;
      await reloadFront();
    }
    changed();
    return infoOf(app);
  };

  const waitExit = (child: ChildProcess) =>
    child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stopApp = async (app: AppProcess) => {
    const wasInFront = app.inFront;
    app.inFront = false;
    if (wasInFront) await reloadFront();
    if (app.state === 'running' || app.state === 'starting') {
      app.state = 'stopped';
      await launcher.stop(launcherName(app.role, app.index), SHUTDOWN_TIMEOUT_MS + 5000);
      await waitExit(app.child);
    }
    app.state = 'stopped';
    changed();
  };

  try {
    // The first api alone: it applies the migrations and bootstraps the project and keys.
    const roles: AppRole[] = [
      ...Array<AppRole>(Math.max(0, options.apis - 1)).fill('api'),
      ...Array<AppRole>(options.gateways).fill('gateway'),
      ...Array<AppRole>(options.workers).fill('worker'),
    ];
    if (options.apis > 0) await launch('api', 1, await freePort());
    const planned = await Promise.all(roles.map(async (role) => ({ role, port: await freePort() })));
    const indexes = new Map<AppRole, number>(options.apis > 0 ? [['api', 1]] : []);
    await Promise.all(
      planned.map(({ role, port }) => {
        const index = (indexes.get(role) ?? 0) + 1;
        indexes.set(role, index);
        return launch(role, index, port);
      }),
    );
    for (const app of apps) app.inFront = app.role !== 'worker';
    const configFile = writeLocalNginxConfig(nginxSettings());
    nginx = await startNginx(launcher, { configFile, readyUrl: `http://127.0.0.1:${ports.nginxHealth}/health` });
  } catch (error) {
    closed = true;
    await stopAll();
    throw error;
  }

  const cluster: LocalCluster = {
    dir,
    frontUrl: `http://127.0.0.1:${ports.front}`,
    keys,
    env,
    processes: () => [...serviceInfos(), ...apps.map(infoOf)],
    process: (name) => infoOf(find(name)),
    add,
    stop: (name) => stopApp(find(name)),
    async kill(name, signal = 'SIGKILL') {
      const app = find(name);
      const exited = waitExit(app.child);
      signalQuietly(app.child.pid ?? 0, signal);
      await exited;
    },
    async restart(name) {
      const app = find(name);
      if (app.state === 'running' || app.state === 'starting') throw new Error(`${name} is running`);
      await launch(app.role, app.index, app.port);
      if (app.role !== 'worker' && !app.inFront) {
        app.inFront = true;
        await reloadFront();
      }
      changed();
      return infoOf(app);
    },
    async restartService(name) {
      await launcher.stop(name, 20_000);
      say(`${name} stopped; starting it again`);
      if (name === 'redis') await startRedis(launcher, { appendOnly: true, port: ports.redis });
      else await startPostgres(launcher, { durable: true, port: ports.postgres });
      say(`${name} running again`);
      changed();
    },
    writeFile(controller = null) {
      controllerInfo = controller;
      writeFile(controller);
    },
    async close() {
      if (closed) return;
      closed = true;
      // No new requests, then the processes that take them (the gateways flush their
      // producers), then the workers (they commit what they wrote), then the stores.
      if (nginx) await launcher.stop('nginx', 5000).catch(() => undefined);
      for (const app of apps) app.inFront = false;
      const stopRole = (roles: AppRole[]) => Promise.allSettled(apps.filter((a) => roles.includes(a.role)).map(stopApp));
      await stopRole(['gateway', 'api']);
      await stopRole(['worker']);
      await stopAll();
      writeFile(null);
    },
  };
  writeFile(null);
  return cluster;
}
