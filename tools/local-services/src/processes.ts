/**
 * Child processes of the local services: free ports, spawning children that die with their
 * parent, signalling and stopping them.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

/** Whether `port` can be listened on at 127.0.0.1 now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The kernel's range of ports for outgoing connections (Linux), else null. */
function ephemeralPortRange(): [number, number] | null {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return low! > 0 && high! >= low! ? [low!, high!] : null;
  } catch {
    return null;
  }
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, chosen below the kernel's range for
 * outgoing connections: a port from that range (what listen(0) gives) can be taken as the local
 * end of any process's next connection before the service it was chosen for binds it, which a
 * child that connects to its stores first and listens last made happen (EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const range = ephemeralPortRange();
  const low = 10_000;
  const high = range ? Math.min(range[0] - 1, 32_767) : 0;
  for (let attempt = 0; high > low && attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await canListen(port)) return port;
  }
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
