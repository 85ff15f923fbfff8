/**
 * The file that global setup writes and tests read: where the shared test
 * services listen, plus what teardown (and the watchdog) need to stop them.
 */
import fs from 'node:fs';

/** Environment variable holding the path of the services file. */
export const SERVICES_ENV_VAR = 'SIGHTLINE_TEST_SERVICES';

/** Connection details of the services started once per jest run. */
export interface TestServices {
  /** e.g. redis://127.0.0.1:PORT */
  redisUrl: string;
  /** Superuser `postgres` on the `postgres` database (trust auth, no password). */
  postgresAdminUrl: string;
  /** The three brokers of the librdkafka mock cluster, host:port. */
  kafkaBrokers: string[];
  /** Pid of the kcat process hosting the mock cluster (SIGSTOP/SIGCONT it to simulate an outage). */
  kcatPid: number;
  /** Base URL of the chdb-backed ClickHouse HTTP front. */
  clickhouseUrl: string;
}

/** A process started by global setup, with the signal that stops it cleanly. */
export interface ServiceProcess {
  name: string;
  pid: number;
  stopSignal: NodeJS.Signals;
}

export interface ServicesFile extends TestServices {
  /** Root temp dir holding data dirs, logs and this file; removed by teardown. */
  tempDir: string;
  processes: ServiceProcess[];
  watchdogPid?: number;
}

export function readServicesFile(filePath = process.env[SERVICES_ENV_VAR]): ServicesFile {
  if (!filePath) {
    throw new Error(
      `${SERVICES_ENV_VAR} is not set: the test services are started by the integration project's ` +
        'global setup, so run this test through jest (e.g. `npx jest --selectProjects integration`)',
    );
  }
  return JSON.parse(fs.readFileSync(filePath, 'utf8')) as ServicesFile;
}
