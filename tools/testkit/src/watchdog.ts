/**
 * Watchdog for the shared test services, started detached by global setup:
 *   node --import tsx watchdog.ts <jest-pid> <services.json>
 * If jest dies without running global teardown (SIGKILL, crash), it stops the
 * services and removes their temp dir. Global teardown ends it with SIGTERM.
 * (The services are also tied to jest by a parent-death signal; the watchdog
 * adds a graceful stop and the temp-dir cleanup.)
 */
import fs from 'node:fs';
import { readServicesFile } from './service-info';
import { isAlive } from '@sightline/local-services';
import { stopServices } from './stop-services';

const POLL_MS = 500;

/** Alive and not a zombie (a dead jest whose parent has not reaped it yet). */
function isRunning(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): trust kill(pid, 0)
  }
}

function main(): void {
  const parentPid = Number(process.argv[2]);
  const servicesFile = process.argv[3];
  if (!parentPid || !servicesFile) {
    process.stderr.write('usage: watchdog.ts <parent-pid> <services.json>\n');
    process.exit(2);
  }
  const services = readServicesFile(servicesFile);
  process.on('SIGTERM', () => process.exit(0));
  const timer = setInterval(() => {
    if (isRunning(parentPid)) return;
    clearInterval(timer);
    void stopServices(services).finally(() => process.exit(0));
  }, POLL_MS);
}

main();
