/**
 * Stopping the shared test services: used by global teardown, by the jest
 * process's exit handler and by the watchdog.
 */
import fs from 'node:fs';
import { isAlive, signalQuietly } from '@sightline/local-services';
import type { ServicesFile } from './service-info';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resumes kcat in case a test left the Kafka mock SIGSTOPped: a stopped process cannot act on SIGTERM. */
function resumeKafkaMock(services: Pick<ServicesFile, 'kcatPid'>): void {
  if (services.kcatPid) signalQuietly(services.kcatPid, 'SIGCONT');
}

/**
 * Gracefully stops every service process (SIGKILL after `graceMs`), then
 * removes the temp dir. `hasExited` tells whether a pid is gone; the default
 * polls the pid, which is enough for processes that are not our children.
 */
export async function stopServices(services: ServicesFile, options: { graceMs?: number; hasExited?: (pid: number) => boolean } = {}): Promise<void> {
  const { graceMs = 5000, hasExited = (pid: number) => !isAlive(pid) } = options;
  resumeKafkaMock(services);
  for (const p of services.processes) signalQuietly(p.pid, p.stopSignal);
  const deadline = Date.now() + graceMs;
  let running = services.processes.filter((p) => !hasExited(p.pid));
  while (running.length > 0 && Date.now() < deadline) {
    await sleep(25);
    running = running.filter((p) => !hasExited(p.pid));
  }
  for (const p of running) signalQuietly(p.pid, 'SIGKILL');
  while (running.length > 0 && Date.now() < deadline + 2000) {
    await sleep(25);
    running = running.filter((p) => !hasExited(p.pid));
  }
  removeTempDir(services.tempDir);
}

/** Synchronous last-resort stop, for a process 'exit' handler that cannot wait. */
export function killServicesNow(services: ServicesFile, urgentSignals: Record<string, NodeJS.Signals>): void {
  resumeKafkaMock(services);
  for (const p of services.processes) signalQuietly(p.pid, urgentSignals[p.name] ?? 'SIGKILL');
}

export function removeTempDir(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
  } catch {
    // best effort: a service still writing may race the removal
  }
}
