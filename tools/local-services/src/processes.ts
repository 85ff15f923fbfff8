/**
 * Child processes of the local services: free ports, spawning children that die with their
 * parent, signalling and stopping them.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

const SETPRIV = '/usr/bin/setpriv';
const hasSetpriv = process.platform === 'linux' && fs.existsSync(SETPRIV);

/**
 * Spawns `command` so that the kernel sends it `deathSignal` when this process
 * dies, even by SIGKILL (setpriv --pdeathsig, then exec: the pid is the
 * command's own). Without setpriv (not Linux) it is a plain spawn.
 */
export function spawnTiedToParent(command: string, args: readonly string[], options: SpawnOptions & { deathSignal?: NodeJS.Signals } = {}): ChildProcess {
  const { deathSignal = 'SIGKILL', ...spawnOptions } = options;
  const spawnWith = { ...spawnOptions, detached: false };
  if (!hasSetpriv) return spawn(command, [...args], spawnWith);
  return spawn(SETPRIV, ['--pdeathsig', deathSignal, '--', command, ...args], spawnWith);
}

/** True while `pid` names a live process we may signal. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends a signal, ignoring a process that is already gone. */
export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already exited
  }
}

/** Resolves when the child has exited (at once if it already has). */
export function childExited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

const withTimeout = (promise: Promise<void>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);

/** Sends `signal`, waits up to `graceMs`, then SIGKILLs. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
  const exited = childExited(child);
  if (child.pid === undefined) return;
  signalQuietly(child.pid, signal);
  if (!(await withTimeout(exited, graceMs))) {
    signalQuietly(child.pid, 'SIGKILL');
    await exited;
  }
}
