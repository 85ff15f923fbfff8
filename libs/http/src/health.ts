import { Router } from 'express';
import type { Registry } from 'prom-client';

/** A named check that throws (or rejects) when unhealthy. */
export interface HealthCheck {
  name: string;
  check: () => Promise<void> | void;
}

const CHECK_TIMEOUT_MS = 2000;

async function runChecks(checks: readonly HealthCheck[]): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const results: Record<string, string> = {};
  let ok = true;
  await Promise.all(
    checks.map(async ({ name, check }) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(check),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
          }),
        ]);
        results[name] = 'ok';
      } catch (error) {
        ok = false;
        results[name] = error instanceof Error ? error.message : String(error);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ok, checks: results };
}

/**
 * `/_health`: liveness (the process and its loops make progress, not mere connectivity);
 * `/_ready`: readiness (dependencies answer, migrations done, not shutting down).
 * `/metrics`: Prometheus exposition.
 */
export function healthRouter(options: {
  liveness?: readonly HealthCheck[];
  readiness: readonly HealthCheck[];
  isShuttingDown: () => boolean;
  registry: Registry;
}): Router {
  const router = Router();
  router.get('/_health', async (_req, res) => {
    const result = await runChecks(options.liveness ?? []);
    res.status(result.ok ? 200 : 503).json({ status: result.ok ? 'ok' : 'unhealthy', checks: result.checks });
  });
  router.get('/_ready', async (_req, res) => {
    if (options.isShuttingDown()) {
      res.status(503).json({ status: 'shutting_down', checks: {} });
      return;
    }
    const result = await runChecks(options.readiness);
    res.status(result.ok ? 200 : 503).json({ status: result.ok ? 'ready' : 'unavailable', checks: result.checks });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', options.registry.contentType);
    res.send(await options.registry.metrics());
  });
  return router;
}
