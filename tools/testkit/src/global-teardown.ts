/**
 * Jest global teardown of the integration project: stops the services started
 * by global-setup.ts (resuming the Kafka mock first, in case a test left it
 * SIGSTOPped) and removes their temp dir.
 */
import { signalQuietly } from '@sightline/local-services';
import { readServicesFile, SERVICES_ENV_VAR } from './service-info';
import { setupState } from './setup-state';
import { stopServices } from './stop-services';

export default async function globalTeardown(): Promise<void> {
  const state = setupState.get();
  const services = state?.services ?? (process.env[SERVICES_ENV_VAR] ? readServicesFile() : undefined);
  if (!services) return;
  // The watchdog would otherwise race us to the same processes.
  if (services.watchdogPid) signalQuietly(services.watchdogPid, 'SIGTERM');

  // Our own children are reaped by node, so 'exit' (not a pid poll, which would
  // see a zombie as alive) tells when they are gone.
  const exited = new Map(state?.children.map((c) => [c.pid, c]) ?? []);
  await stopServices(services, {
    hasExited: state
      ? (pid) => {
          const child = exited.get(pid);
          return !child || child.exitCode !== null || child.signalCode !== null;
        }
      : undefined,
  });

  if (state) process.removeListener('exit', state.killOnExit);
  setupState.clear();
  delete process.env[SERVICES_ENV_VAR];
}
