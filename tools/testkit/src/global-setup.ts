/**
 * Jest global setup of the integration project: starts Redis, PostgreSQL, the
 * Kafka mock cluster and the chdb ClickHouse HTTP front once per run, in
 * parallel, on free loopback ports in a temp dir, and writes their connection
 * details to <tmp>/services.json, whose path goes into SIGHTLINE_TEST_SERVICES
 * (jest workers inherit the environment global setup leaves behind).
 *
 * The services stop in global teardown; if jest dies first, the kernel's
 * parent-death signal, the 'exit' handler below and a detached watchdog stop them.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SERVICES_ENV_VAR, type ServicesFile } from './service-info';
import { ServiceLauncher, startClickHouseFront, startKafkaMock, startPostgres, startRedis } from '@sightline/local-services';
import { killServicesNow, removeTempDir, stopServices } from './stop-services';
import { setupState, type SetupState } from './setup-state';

export default async function globalSetup(): Promise<void> {
  // The integration and slow projects share one set of services: Jest runs every project's
  // global setup before any test, so the second call finds the first one's services.
  if (setupState.get()) return;
  const startedAt = Date.now();
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-test-'));
  // PostgreSQL runs as another OS user when we are root: it must reach its data dir.
  fs.chmodSync(tempDir, 0o755);
  const launcher = new ServiceLauncher(tempDir);

  const results = await Promise.allSettled([startRedis(launcher), startPostgres(launcher), startKafkaMock(launcher), startClickHouseFront(launcher)]);
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failures.length > 0) {
    await stopServices(servicesFileOf(launcher, {}), { graceMs: 2000 });
    throw new Error(
      `Integration test services failed to start:\n${failures.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason))).join('\n\n')}`,
    );
  }
  const [redis, postgres, kafka, clickhouse] = results.map((r) => (r as PromiseFulfilledResult<object>).value);
  const services = servicesFileOf(launcher, { ...redis, ...postgres, ...kafka, ...clickhouse });

  const servicesPath = path.join(tempDir, 'services.json');
  fs.writeFileSync(servicesPath, JSON.stringify(services, null, 2));
  services.watchdogPid = startWatchdog(servicesPath);
  fs.writeFileSync(servicesPath, JSON.stringify(services, null, 2));
  process.env[SERVICES_ENV_VAR] = servicesPath;

  const urgentSignals = Object.fromEntries(launcher.started.map((s) => [s.process.name, s.urgentSignal]));
  const killOnExit = () => {
    killServicesNow(services, urgentSignals);
    removeTempDir(tempDir);
  };
  process.on('exit', killOnExit);
  const state: SetupState = { services, children: launcher.started.map((s) => s.child), killOnExit };
  setupState.set(state);

  if (process.env.SIGHTLINE_TEST_VERBOSE) {
    process.stderr.write(`\n[testkit] services ready in ${Date.now() - startedAt} ms: ${servicesPath}\n`);
  }
}

function servicesFileOf(launcher: ServiceLauncher, info: Partial<ServicesFile>): ServicesFile {
  return {
    redisUrl: '',
    postgresAdminUrl: '',
    kafkaBrokers: [],
    kcatPid: 0,
    clickhouseUrl: '',
    ...info,
    tempDir: launcher.tempDir,
    processes: launcher.started.map((s) => s.process),
  };
}

/**
 * Starts the watchdog detached (own process group, no stdio, unref'd) so that
 * it outlives jest.
 */
function startWatchdog(servicesPath: string): number | undefined {
  const repoRoot = path.resolve(__dirname, '..', '..', '..');
  const watchdog = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'watchdog.ts'), String(process.pid), servicesPath], {
    cwd: repoRoot,
    detached: true,
    stdio: 'ignore',
  });
  watchdog.on('error', () => undefined);
  watchdog.unref();
  return watchdog.pid;
}
