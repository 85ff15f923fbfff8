/**
 * Child processes for tests: `startProcess` for running an app (e.g. the gateway) in a test,
 * stopped after the test file. The spawning helpers live in @sightline/local-services.
 */
import type { ChildProcess } from 'node:child_process';
import { signalQuietly, spawnTiedToParent, stopChild, waitFor } from '@sightline/local-services';

export { freePort, isAlive, signalQuietly } from '@sightline/local-services';

export interface StartProcessOptions {
  /** Added to (and overriding) the current environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Ready once the combined stdout+stderr matches this. */
  readyPattern?: RegExp | string;
  /** Ready once a GET on this URL answers 2xx. */
  readyUrl?: string;
  /** How long to wait for readiness (default 30 s). */
  timeoutMs?: number;
}

export interface StartedProcess {
  proc: ChildProcess;
  /** Everything the process printed so far (stdout and stderr interleaved; the last 1 MB). */
  output(): string;
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
}

const MAX_OUTPUT_CHARS = 1 << 20;

/** Thrown inside a readiness check to give up at once (the process died). */
class StopWaiting extends Error {}

/**
 * Processes started by `startProcess` in the current test file. Kept on the
 * test file's global object so that the jest setup file (jest-setup.ts) stops
 * them after the file, whichever copy of this module a test imported.
 */
const REGISTRY_KEY = Symbol.for('sightline.testkit.startedProcesses');
function registry(): Set<StartedProcess> {
  const holder = globalThis as { [REGISTRY_KEY]?: Set<StartedProcess> };
  return (holder[REGISTRY_KEY] ??= new Set());
}

/** Stops every process started by `startProcess` in this test file. */
export async function stopStartedProcesses(): Promise<void> {
  const started = [...registry()];
  await Promise.all(started.map((p) => p.stop()));
}

/**
 * Spawns a child (e.g. `startProcess('node', ['--import', 'tsx', 'apps/gateway/src/main.ts'], { readyUrl })`),
 * collects its output, and resolves once it is ready. The child is stopped after
 * the test file (jest-setup.ts) and killed by the kernel if the jest process
 * running the test dies. (A process 'exit' listener would not help: inside a test
 * file, `process` is jest's sandboxed copy and its 'exit' listeners never run.)
 * Rejects, with the output, if the child exits or is not ready in time.
 */
export async function startProcess(command: string, args: readonly string[], options: StartProcessOptions = {}): Promise<StartedProcess> {
  const { env, cwd, readyPattern, readyUrl, timeoutMs = 30_000 } = options;
  const proc = spawnTiedToParent(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > MAX_OUTPUT_CHARS) output = output.slice(-MAX_OUTPUT_CHARS);
  };
  proc.stdout?.on('data', collect);
  proc.stderr?.on('data', collect);
  let spawnError: Error | undefined;
  proc.once('error', (err) => (spawnError = err));

  const started: StartedProcess = {
    proc,
    output: () => output,
    kill: (signal = 'SIGTERM') => {
      if (proc.pid !== undefined) signalQuietly(proc.pid, signal);
    },
    stop: async () => {
      await stopChild(proc);
      registry().delete(started);
    },
  };
  registry().add(started);

  const commandLine = `${command} ${args.join(' ')}`;
  try {
    await waitFor(
      async () => {
        if (spawnError) throw new StopWaiting(`could not start: ${spawnError.message}`);
        if (proc.exitCode !== null || proc.signalCode !== null) {
          throw new StopWaiting(`exited early (code ${proc.exitCode}, signal ${proc.signalCode})`);
        }
        if (readyPattern !== undefined) {
          const matched = typeof readyPattern === 'string' ? output.includes(readyPattern) : readyPattern.test(output);
          if (!matched) return false;
        }
        if (readyUrl !== undefined) {
          const response = await fetch(readyUrl).catch(() => undefined);
          await response?.body?.cancel();
          if (!response?.ok) return false;
        }
        return true;
      },
      { timeoutMs, intervalMs: 50, description: `${commandLine} to be ready`, bailOn: (e) => e instanceof StopWaiting },
    );
  } catch (err) {
    await started.stop();
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`startProcess: ${commandLine}: ${reason}\n--- output ---\n${output}`, { cause: err });
  }
  return started;
}
