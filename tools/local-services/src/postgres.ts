import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from './processes';
import type { ServiceLauncher } from './service-launcher';

export interface PostgresOptions {
  /** Listen here (a restart keeps its port); default a free one. */
  port?: number;
  /** fsync and synchronous commits on (a cluster whose data is kept); default off (a throwaway test server). */
  durable?: boolean;
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

/**
 * A cluster in `<dir>/postgres` (initdb on first start: trust auth, superuser `postgres`) and
 * postgres on 127.0.0.1. PostgreSQL refuses to run as root, so as root both run as the
 * `postgres` OS user, which then owns the data dir. A data dir left by an earlier start is
 * used as it is.
 */
export async function startPostgres(launcher: ServiceLauncher, options: PostgresOptions = {}): Promise<{ postgresAdminUrl: string; port: number }> {
  const binDir = postgresBinDir();
  const bin = (name: string) => (binDir ? path.join(binDir, name) : name);
  const runAs: { uid?: number; gid?: number } = process.getuid?.() === 0 ? osUser('postgres') : {};
  const dataDir = path.join(launcher.tempDir, 'postgres');
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.mkdirSync(dataDir, { mode: 0o700, recursive: true });
    if (runAs.uid !== undefined && runAs.gid !== undefined) fs.chownSync(dataDir, runAs.uid, runAs.gid);
    await launcher.runLogged(
      'postgres',
      bin('initdb'),
      ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'],
      { ...runAs, cwd: dataDir },
    );
  }

  const port = options.port ?? (await freePort());
  const durability = options.durable ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };
  const settings = { listen_addresses: '127.0.0.1', max_connections: '200', ...durability };
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
  return { postgresAdminUrl, port };
}
