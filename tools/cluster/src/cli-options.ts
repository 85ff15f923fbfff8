import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { APP_ROLES, type AppRole } from './cluster-file';

export const USAGE = `Usage:
  npm run start:cluster -- [--gateways N] [--workers N] [--api N] [--partitions N] [--port P] [--dir DIR] [--quiet]
      starts PostgreSQL, Redis, a 3-broker Kafka mock, ClickHouse (CLICKHOUSE_URL, else a chdb
      front), the apps and nginx in front of them; Ctrl-C or SIGTERM stops everything
  npm run start:cluster -- [--dir DIR] --add gateway|worker|api     one more process, while it runs
  npm run start:cluster -- [--dir DIR] --stop worker:2              stop one process, while it runs
  npm run start:cluster -- [--dir DIR] --status                     the processes of the running cluster

  --gateways N    gateways behind nginx (default 2)
  --workers N     workers, one consumer group (default 3)
  --api N         api processes behind nginx (default 2)
  --partitions N  partitions of each topic: the most workers that share live events (default 12)
  --port P        the front address's port (default 8000; 0: any free port)
  --dir DIR       data, logs and cluster.json (default ${defaultDir()})
  --quiet         do not print the processes' logs (they are in DIR/logs either way)`;

export type CliCommand =
  | { kind: 'start'; dir: string; gateways: number; workers: number; apis: number; partitions: number; port: number; follow: boolean }
  | { kind: 'add'; dir: string; role: AppRole }
  | { kind: 'stop'; dir: string; name: string }
  | { kind: 'status'; dir: string }
  | { kind: 'help' };

/** Under the system temp dir: PostgreSQL (run as its own user when this runs as root) must be able to reach it. */
export function defaultDir(): string {
  return path.join(os.tmpdir(), `sightline-cluster-${process.getuid?.() ?? 'user'}`);
}

function count(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max} (got ${value})`);
  return n;
}

/** Parses the command line; throws an Error whose message is meant for the user. */
export function parseCli(argv: readonly string[]): CliCommand {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      gateways: { type: 'string' },
      workers: { type: 'string' },
      api: { type: 'string' },
      partitions: { type: 'string' },
      port: { type: 'string' },
      dir: { type: 'string' },
      add: { type: 'string' },
      stop: { type: 'string' },
      status: { type: 'boolean' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length > 0) throw new Error(`unexpected argument ${positionals[0]}`);
  if (values.help) return { kind: 'help' };
  const dir = path.resolve(values.dir ?? defaultDir());
  const controls = [values.add !== undefined, values.stop !== undefined, values.status === true].filter(Boolean).length;
  if (controls > 1) throw new Error('give one of --add, --stop and --status');
  if (controls === 1) {
    const startOnly = (['gateways', 'workers', 'api', 'partitions', 'port', 'quiet'] as const).filter((k) => values[k] !== undefined);
    if (startOnly.length > 0) throw new Error(`--${startOnly[0]} is for starting a cluster, not with --add, --stop or --status`);
    if (values.status) return { kind: 'status', dir };
    if (values.add !== undefined) {
      if (!APP_ROLES.includes(values.add as AppRole)) throw new Error(`--add takes ${APP_ROLES.join(', ')} (got ${values.add})`);
      return { kind: 'add', dir, role: values.add as AppRole };
    }
    if (!/^(gateway|worker|api):\d+$/.test(values.stop!)) throw new Error(`--stop takes a process name such as worker:2 (got ${values.stop})`);
    return { kind: 'stop', dir, name: values.stop! };
  }
  const gateways = count('gateways', values.gateways, 2, 1, 32);
  const workers = count('workers', values.workers, 3, 1, 64);
  const apis = count('api', values.api, 2, 1, 32);
  const partitions = count('partitions', values.partitions, 12, 1, 1000);
  const port = count('port', values.port, 8000, 0, 65535);
  return { kind: 'start', dir, gateways, workers, apis, partitions, port, follow: !values.quiet };
}
