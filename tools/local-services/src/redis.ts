import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from './processes';
import type { ServiceLauncher } from './service-launcher';

export interface RedisOptions {
  /** Listen here (a restart keeps its port); default a free one. */
  port?: number;
  /**
   * Keep what was written across a restart (append-only file, fsync every second), as
   * BullMQ's jobs and locks need; default off (a throwaway test server).
   */
  appendOnly?: boolean;
}

/**
 * redis-server on 127.0.0.1 with its data in `<dir>/redis`, never evicting a key (BullMQ
 * loses jobs and locks when Redis evicts; the worker refuses any other policy).
 */
export async function startRedis(launcher: ServiceLauncher, options: RedisOptions = {}): Promise<{ redisUrl: string; port: number }> {
  const port = options.port ?? (await freePort());
  const dir = path.join(launcher.tempDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  const persistence = options.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
  const child = launcher.spawnService(
    'redis',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--maxmemory-policy', 'noeviction', '--dir', dir, '--daemonize', 'no'],
    { stopSignal: 'SIGTERM', urgentSignal: 'SIGKILL' },
  );
  await launcher.waitUntilReady('redis', child, () => redisPing(port));
  return { redisUrl: `redis://127.0.0.1:${port}`, port };
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
