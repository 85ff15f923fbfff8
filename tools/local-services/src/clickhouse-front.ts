import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './processes';
import { REPO_ROOT, type ServiceLauncher } from './service-launcher';

/** The chdb-backed ClickHouse HTTP front (chdb-http-front.ts) as its own node process, data in `<dir>/chdb`. */
export async function startClickHouseFront(launcher: ServiceLauncher, options: { port?: number } = {}): Promise<{ clickhouseUrl: string }> {
  const port = options.port ?? (await freePort());
  const dataDir = path.join(launcher.tempDir, 'chdb');
  fs.mkdirSync(dataDir, { recursive: true });
  const child = launcher.spawnService(
    'chdb-http-front',
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'chdb-http-front.ts'), '--data-dir', dataDir, '--port', String(port)],
    { cwd: REPO_ROOT, stopSignal: 'SIGTERM', urgentSignal: 'SIGKILL' },
  );
  const clickhouseUrl = `http://127.0.0.1:${port}`;
  await launcher.waitUntilReady('chdb-http-front', child, async () => {
    const response = await fetch(`${clickhouseUrl}/ping`).catch(() => undefined);
    return (await response?.text()) === 'Ok.\n';
  });
  return { clickhouseUrl };
}
