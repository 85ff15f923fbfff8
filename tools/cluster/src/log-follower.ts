/**
 * Follows every log file in DIR/logs (one per process: gateway-2.log, postgres.log, …) and
 * prints each new line with the process's name in front (`gateway:2 | …`). Files are read from
 * where they ended when following began, so an earlier run's lines are not repeated.
 */
import fs from 'node:fs';
import path from 'node:path';

const POLL_MS = 250;
const NAME_WIDTH = 16;

/** gateway-2.log → gateway:2; postgres.log → postgres. */
export function processNameOfLog(file: string): string {
  const base = path.basename(file, '.log');
  const app = /^(gateway|worker|api)-(\d+)$/.exec(base);
  return app ? `${app[1]}:${app[2]}` : base;
}

export function followLogs(logDir: string, write: (line: string) => void): { stop(): void } {
  const offsets = new Map<string, number>();
  const partial = new Map<string, string>();
  const files = () => (fs.existsSync(logDir) ? fs.readdirSync(logDir).filter((f) => f.endsWith('.log')) : []);
  for (const file of files()) offsets.set(file, fs.statSync(path.join(logDir, file)).size);

  const poll = () => {
    for (const file of files()) {
      const full = path.join(logDir, file);
      let size: number;
      try {
        size = fs.statSync(full).size;
      } catch {
        continue;
      }
      const from = offsets.get(file) ?? 0;
      if (size <= from) continue;
      const fd = fs.openSync(full, 'r');
      const buffer = Buffer.alloc(Math.min(size - from, 1 << 20));
      const read = fs.readSync(fd, buffer, 0, buffer.length, from);
      fs.closeSync(fd);
      offsets.set(file, from + read);
      const text = (partial.get(file) ?? '') + buffer.toString('utf8', 0, read);
      const lines = text.split('\n');
      partial.set(file, lines.pop()!);
      const prefix = processNameOfLog(file).padEnd(NAME_WIDTH);
      for (const line of lines) if (line.trim() !== '') write(`${prefix}| ${line}`);
    }
  };
  const timer = setInterval(poll, POLL_MS);
  return {
    stop() {
      clearInterval(timer);
      poll();
    },
  };
}
