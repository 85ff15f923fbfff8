/**
 * Starting local services (Redis, PostgreSQL, the Kafka mock, the chdb ClickHouse front,
 * nginx) in one directory. Each child writes to its own log file (never a pipe: a pipe nobody
 * drains would eventually block the service) and is tied to this process, so the kernel stops
 * it if this process dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isAlive, signalQuietly, spawnTiedToParent } from './processes';
import { waitFor } from './wait-for';

/** A service process, with the signal that stops it cleanly. */
export interface ServiceProcess {
  name: string;
  pid: number;
  stopSignal: NodeJS.Signals;
}

export interface StartedService {
  process: ServiceProcess;
  child: ChildProcess;
  /** Signal for a stop that cannot wait (the parent exiting): no graceful shutdown. */
  urgentSignal: NodeJS.Signals;
}

export interface SpawnServiceOptions {
  stopSignal: NodeJS.Signals;
  urgentSignal: NodeJS.Signals;
  uid?: number;
  gid?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Context shared by the starters: the directory and a registry of what was spawned. */
export class ServiceLauncher {
  readonly started: StartedService[] = [];

  constructor(
    readonly tempDir: string,
    /** How long a service may take to answer after its start. */
    readonly readyTimeoutMs = 20_000,
  ) {
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

  /**
   * Spawns a long-running service with stdout+stderr appended to its log file. A service
   * started again under the same name (a restart) replaces its exited predecessor here.
   */
  spawnService(name: string, command: string, args: string[], options: SpawnServiceOptions): ChildProcess {
    const log = fs.openSync(this.logFile(name), 'a');
    try {
      const child = spawnTiedToParent(command, args, {
        cwd: options.cwd ?? this.tempDir,
        uid: options.uid,
        gid: options.gid,
        env: options.env,
        stdio: ['ignore', log, log],
        deathSignal: options.urgentSignal,
      });
      child.on('error', (err) => fs.appendFileSync(this.logFile(name), `\n[local-services] spawn failed: ${err.message}\n`));
      if (child.pid !== undefined) {
        const previous = this.started.findIndex((s) => s.process.name === name);
        if (previous >= 0) this.started.splice(previous, 1);
        this.started.push({ process: { name, pid: child.pid, stopSignal: options.stopSignal }, child, urgentSignal: options.urgentSignal });
      }
      return child;
    } finally {
      fs.closeSync(log);
    }
  }

  /** The running service of that name. */
  service(name: string): StartedService {
    const found = this.started.find((s) => s.process.name === name);
    if (!found) throw new Error(`no service named ${name}`);
    return found;
  }

  /** Stops one service with its stop signal (SIGKILL after `graceMs`); resolves once it exited. */
  async stop(name: string, graceMs = 10_000): Promise<void> {
    const { child, process: info } = this.service(name);
    const exited = () => child.exitCode !== null || child.signalCode !== null || !isAlive(info.pid);
    // A process left SIGSTOPped by a test cannot act on its stop signal.
    signalQuietly(info.pid, 'SIGCONT');
    signalQuietly(info.pid, info.stopSignal);
    const deadline = Date.now() + graceMs;
    while (!exited() && Date.now() < deadline) await sleep(25);
    if (!exited()) signalQuietly(info.pid, 'SIGKILL');
    while (!exited()) await sleep(25);
  }

  /** Waits for `check` to pass, failing fast (with the log) if the service exits. */
  async waitUntilReady<T>(name: string, child: ChildProcess, check: () => Promise<T | false>, timeoutMs = this.readyTimeoutMs): Promise<T> {
    try {
      return await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
            throw new ServiceDied(`exited (code ${child.exitCode}, signal ${child.signalCode})`);
          }
          return check();
        },
        { timeoutMs, intervalMs: 50, description: `${name} to be ready`, bailOn: (e) => e instanceof ServiceDied },
      );
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(`${name} did not start: ${reason}\n--- ${this.logFile(name)} ---\n${this.logTail(name)}`);
    }
  }

  /** Runs a command to completion with output appended to the service's log file; rejects on failure. */
  runLogged(name: string, command: string, args: string[], options: { uid?: number; gid?: number; cwd?: string } = {}): Promise<void> {
    const log = fs.openSync(this.logFile(name), 'a');
    return new Promise<void>((resolve, reject) => {
      const child = spawn(command, args, { ...options, stdio: ['ignore', log, log] });
      child.on('error', reject);
      child.on('exit', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(`${path.basename(command)} failed (code ${code}, signal ${signal})\n${this.logTail(name)}`));
      });
    }).finally(() => fs.closeSync(log));
  }
}

class ServiceDied extends Error {}

/** The repository root: `node --import tsx` resolves tsx from the working directory, and the root has it. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
