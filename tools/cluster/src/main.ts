/**
 * `npm run start:cluster` (scripts/start-cluster.sh installs the Debian packages, then runs
 * this): starts a local cluster, prints its front address, keys and processes, follows their
 * logs, and stops everything on Ctrl-C or SIGTERM. With --add, --stop or --status it talks to
 * the cluster already running in --dir instead. See docs/running.md, "Running several processes".
 */
import path from 'node:path';
import { isAlive } from '@sightline/local-services';
import { parseCli, USAGE, type CliCommand } from './cli-options';
import { clusterFilePath, readClusterFile, type ClusterProcessInfo } from './cluster-file';
import { startCluster, type LocalCluster } from './cluster';
import { sendControlRequest, startControlServer } from './control';
import { followLogs } from './log-follower';

const out = (line: string) => process.stdout.write(`${line}\n`);

function formatProcesses(processes: readonly ClusterProcessInfo[]): string {
  const rows = [
    ['process', 'pid', 'port', 'state', 'address'],
    ...processes.map((p) => [p.name, String(p.pid), p.port ? String(p.port) : '', p.exit ? `${p.state} (${p.exit})` : p.state, p.url ?? '']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}`.trimEnd()).join('\n');
}

function summary(cluster: LocalCluster, seconds: number): string {
  const dir = cluster.dir;
  return [
    '',
    `Sightline cluster up in ${seconds} s: ${cluster.frontUrl}  (capture, decide, the API and the web app)`,
    `  project API key:   ${cluster.keys.projectApiKey}   (SDKs: capture and flags)`,
    `  personal API key:  ${cluster.keys.personalApiKey}   (Authorization: Bearer … on ${cluster.frontUrl}/api/)`,
    `  data and logs:     ${dir}   (every process in ${clusterFilePath(dir)})`,
    '',
    formatProcesses(cluster.processes()),
    '',
    `  one more process:  npm run start:cluster -- --dir ${dir} --add worker   (or gateway, api)`,
    `  stop one:          npm run start:cluster -- --dir ${dir} --stop worker:2`,
    '  Ctrl-C stops everything.',
    '',
  ].join('\n');
}

async function control(command: Exclude<CliCommand, { kind: 'start' | 'help' }>): Promise<number> {
  const file = readClusterFile(command.dir);
  if (!file?.controller || !isAlive(file.controller.pid)) {
    process.stderr.write(`no cluster is running in ${command.dir} (start one with npm run start:cluster -- --dir ${command.dir})\n`);
    return 1;
  }
  const request =
    command.kind === 'add'
      ? { action: 'add' as const, role: command.role }
      : command.kind === 'stop'
        ? { action: 'stop' as const, name: command.name }
        : { action: 'status' as const };
  const answer = await sendControlRequest(file.controller, request);
  if (!answer.ok) {
    process.stderr.write(`${answer.error}\n`);
    return 1;
  }
  if (answer.process)
    out(
      `${command.kind === 'add' ? 'started' : 'stopped'} ${answer.process.name} (pid ${answer.process.pid}${answer.process.port ? `, port ${answer.process.port}` : ''})`,
    );
  out(formatProcesses(answer.processes));
  return 0;
}

async function start(command: Extract<CliCommand, { kind: 'start' }>): Promise<number> {
  const running = readClusterFile(command.dir)?.controller;
  if (running && isAlive(running.pid)) {
    process.stderr.write(`a cluster already runs in ${command.dir} (pid ${running.pid}): use --add/--stop/--status, or stop it first\n`);
    return 1;
  }
  const followed = command.follow ? followLogs(path.join(command.dir, 'logs'), out) : undefined;
  const started = Date.now();
  let cluster: LocalCluster | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) =>
    (stopping ??= (async () => {
      out(`[cluster] ${signal}: stopping every process`);
      await cluster?.close();
      followed?.stop();
      out('[cluster] stopped');
    })());
  // Until the cluster is up a signal still ends this process; its children die with it (parent-death signal).
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      out('[cluster] stopping already; a third signal ends this command at once (its processes are killed with it)');
      process.once(signal, () => process.exit(130));
      return;
    }
    void stop(signal).then(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  out(
    `[cluster] starting in ${command.dir}: ${command.gateways} gateways, ${command.workers} workers, ${command.apis} api processes, ${command.partitions} partitions`,
  );
  cluster = await startCluster({
    dir: command.dir,
    gateways: command.gateways,
    workers: command.workers,
    apis: command.apis,
    partitions: command.partitions,
    frontPort: command.port,
    clickhouse: process.env.CLICKHOUSE_URL
      ? {
          url: process.env.CLICKHOUSE_URL,
          database: process.env.CLICKHOUSE_DATABASE,
          user: process.env.CLICKHOUSE_USER,
          password: process.env.CLICKHOUSE_PASSWORD,
        }
      : undefined,
    baseEnv: process.env,
    onEvent: (message) => out(`[cluster] ${message}`),
  });
  if (stopping) return 0;
  const controller = await startControlServer(cluster);
  cluster.writeFile(controller.info);
  out(summary(cluster, Math.round((Date.now() - started) / 1000)));
  await new Promise<void>(() => undefined);
  return 0;
}

async function main(): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCli(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (command.kind === 'help') {
    out(USAGE);
    return 0;
  }
  return command.kind === 'start' ? start(command) : control(command);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`start:cluster: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
