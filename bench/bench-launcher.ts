import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServiceLauncher } from '@sightline/local-services';

export interface BenchLauncher {
  launcher: ServiceLauncher;
  /** Stops every service it started with its stop signal, waits `graceMs`, removes the directory. */
  stopAll(graceMs: number): Promise<void>;
}

/** A service launcher over a fresh temporary directory, for a benchmark's own services. */
export function createBenchLauncher(name: string): BenchLauncher {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), `sightline-bench-${name}-`));
  // PostgreSQL runs as its own OS user and must reach its data directory.
  fs.chmodSync(tempDir, 0o755);
  const launcher = new ServiceLauncher(tempDir);
  return {
    launcher,
    async stopAll(graceMs) {
      for (const s of launcher.started) s.child.kill(s.process.stopSignal);
      await new Promise((r) => setTimeout(r, graceMs));
      fs.rmSync(tempDir, { recursive: true, force: true });
    },
  };
}
