import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import type { ServiceLauncher } from './service-launcher';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Debian installs nginx in /usr/sbin, which a non-root PATH may lack. */
export function nginxBinary(): string {
  return fs.existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
}

/** `nginx -t` on a configuration file: throws with nginx's own message when it is refused. */
export function checkNginxConfig(configFile: string): void {
  const result = spawnSync(nginxBinary(), ['-t', '-q', '-c', configFile], { encoding: 'utf8' });
  if (result.error) throw new Error(`nginx: ${result.error.message} (install Debian's nginx package)`);
  if (result.status !== 0) throw new Error(`nginx refused ${configFile}:\n${result.stderr.trim()}`);
}

/** The pids of a process's children (nginx's workers), from /proc. */
function childPids(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

export interface RunningNginx {
  pid: number;
  /** Loads the (rewritten) configuration file; resolves once only new workers serve (or, past the ready timeout, once they started). */
  reload(): Promise<void>;
}

/**
 * nginx in the foreground (`daemon off;` must be in the file) with a configuration file this
 * process wrote; ready once `readyUrl` answers. SIGTERM (fast shutdown) also on the urgent
 * path: the master then ends its workers, which a SIGKILLed master would leave behind.
 */
export async function startNginx(launcher: ServiceLauncher, options: { configFile: string; readyUrl: string }): Promise<RunningNginx> {
  checkNginxConfig(options.configFile);
  const child = launcher.spawnService('nginx', nginxBinary(), ['-c', options.configFile], { stopSignal: 'SIGTERM', urgentSignal: 'SIGTERM' });
  await launcher.waitUntilReady('nginx', child, async () => {
    const response = await fetch(options.readyUrl).catch(() => undefined);
    await response?.body?.cancel();
    return response?.ok === true;
  });
  const pid = child.pid as number;
  return {
    pid,
    async reload() {
      checkNginxConfig(options.configFile);
      const before = new Set(childPids(pid));
      process.kill(pid, 'SIGHUP');
      // The master starts workers with the new configuration, then asks the old ones to finish:
      // they close idle keep-alive connections and exit once their requests are answered. Until
      // then a request on a kept-alive connection may still go by the old configuration.
      const deadline = Date.now() + launcher.readyTimeoutMs;
      let started = false;
      while (Date.now() < deadline) {
        const now = childPids(pid);
        started ||= now.some((p) => !before.has(p));
        if (started && !now.some((p) => before.has(p))) return;
        await sleep(25);
      }
      if (!started) throw new Error(`nginx did not load ${options.configFile} within ${launcher.readyTimeoutMs} ms\n${launcher.logTail('nginx')}`);
    },
  };
}
