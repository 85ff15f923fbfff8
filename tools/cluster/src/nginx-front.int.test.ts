// The local cluster's front, a real nginx with the configuration made from deploy/nginx.conf,
// in front of stand-in processes: a capture or decide POST that finds a process down (connection
// refused) or answered 503 goes to the next one; a management POST that was answered is not
// sent twice; a reload takes a process out.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { freePort, ServiceLauncher, startNginx, type RunningNginx } from '@sightline/local-services';
import { writeLocalNginxConfig, type LocalNginxSettings } from './nginx-config';

interface StandIn {
  port: number;
  requests: string[];
  close(): Promise<void>;
}

/** An HTTP server answering every request with `status`, recording "METHOD path". */
async function standIn(status: number): Promise<StandIn> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the local cluster front (nginx from deploy/nginx.conf)', () => {
  let dir: string;
  let launcher: ServiceLauncher;
  let nginx: RunningNginx;
  let settings: LocalNginxSettings;
  let front: string;
  const standIns: StandIn[] = [];
  let failing: StandIn;
  let healthy: StandIn;
  let refusedPort: number;

  const post = (uri: string) =>
    fetch(`${front}${uri}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"event":"e","distinct_id":"d","api_key":"k"}' });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-front-'));
    fs.chmodSync(dir, 0o755);
    launcher = new ServiceLauncher(dir);
    failing = await standIn(503);
    healthy = await standIn(200);
    standIns.push(failing, healthy);
    refusedPort = await freePort();
    settings = {
      listenPort: await freePort(),
      healthPort: await freePort(),
      // Round robin starts anywhere: whichever process a request meets first, it ends at `healthy`.
      gatewayPorts: [refusedPort, failing.port, healthy.port],
      apiPorts: [failing.port, healthy.port],
      dir: path.join(dir, 'nginx'),
    };
    front = `http://127.0.0.1:${settings.listenPort}`;
    nginx = await startNginx(launcher, { configFile: writeLocalNginxConfig(settings), readyUrl: `http://127.0.0.1:${settings.healthPort}/health` });
  });

  afterAll(async () => {
    await Promise.allSettled(launcher.started.map((s) => launcher.stop(s.process.name, 5000)));
    await Promise.all(standIns.map((s) => s.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // First, while no process is marked failed yet (nginx then skips it for 10 s).
  it('does not send an answered management POST to a second api process', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await post('/api/projects/')).status);
    // Each POST reached one process only: the failing one's 503s come back to the client.
    expect(failing.requests.length).toBeGreaterThan(0);
    expect(failing.requests.length + healthy.requests.length).toBe(6);
    expect(statuses.filter((s) => s === 503)).toHaveLength(failing.requests.length);
  });

  it('passes captures and flag requests on past a refused connection or a 503: every one is answered 200', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      for (const uri of ['/capture/', '/batch', '/i/v0/e/', '/decide/?v=3', '/flags/?v=2']) statuses.push((await post(uri)).status);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(healthy.requests.filter((r) => !r.startsWith('POST /api/'))).toHaveLength(60);
  });

  it('takes a process out on reload', async () => {
    fs.rmSync(path.join(settings.dir, 'nginx.conf'));
    writeLocalNginxConfig({ ...settings, gatewayPorts: [failing.port] });
    await nginx.reload();
    const answer = await post('/capture/');
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual({ status: 503 });
  });
});
