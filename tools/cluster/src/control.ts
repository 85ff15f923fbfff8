/**
 * How a second `npm run start:cluster -- --add worker` (or `--stop worker:2`, `--status`)
 * reaches the running one: a small HTTP server on loopback whose address and token are in
 * cluster.json (readable only by its owner).
 */
import http from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { APP_ROLES, type AppRole, type ClusterFile, type ClusterProcessInfo } from './cluster-file';
import type { LocalCluster } from './cluster';

export type ControlRequest = { action: 'add'; role: AppRole } | { action: 'stop'; name: string } | { action: 'status' };
export type ControlAnswer = { ok: true; process?: ClusterProcessInfo; processes: ClusterProcessInfo[] } | { ok: false; error: string };

const MAX_BODY_BYTES = 4096;

function parseRequest(body: string): ControlRequest {
  const value = JSON.parse(body) as Partial<Record<string, unknown>>;
  if (value.action === 'status') return { action: 'status' };
  if (value.action === 'add' && APP_ROLES.includes(value.role as AppRole)) return { action: 'add', role: value.role as AppRole };
  if (value.action === 'stop' && typeof value.name === 'string') return { action: 'stop', name: value.name };
  throw new Error(`unknown request (actions: add <${APP_ROLES.join('|')}>, stop <name>, status)`);
}

export async function startControlServer(cluster: LocalCluster): Promise<{ info: NonNullable<ClusterFile['controller']>; close(): Promise<void> }> {
  const token = randomBytes(24).toString('hex');
  const expected = Buffer.from(`Bearer ${token}`);
  const server = http.createServer((req, res) => {
    const answer = (status: number, body: ControlAnswer) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return answer(401, { ok: false, error: 'wrong token' });
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_BODY_BYTES) req.destroy();
    });
    req.on('end', () => {
      void (async () => {
        try {
          const request = parseRequest(body || '{"action":"status"}');
          const process =
            request.action === 'add'
              ? await cluster.add(request.role)
              : request.action === 'stop'
                ? (await cluster.stop(request.name), cluster.process(request.name))
                : undefined;
          answer(200, { ok: true, ...(process ? { process } : {}), processes: cluster.processes() });
        } catch (error) {
          answer(400, { ok: false, error: error instanceof Error ? error.message : String(error) });
        }
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    info: { pid: process.pid, url: `http://127.0.0.1:${port}`, token },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends one request to the running cluster command named in cluster.json. */
export async function sendControlRequest(controller: NonNullable<ClusterFile['controller']>, request: ControlRequest): Promise<ControlAnswer> {
  const response = await fetch(controller.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${controller.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(request),
    // Adding a process waits for it to be ready (tsx compiles it first).
    signal: AbortSignal.timeout(180_000),
  });
  return (await response.json()) as ControlAnswer;
}
