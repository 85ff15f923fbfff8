/**
 * One server of the gateway benchmark, in its own process so the load generator does not
 * share its event loop. `mode`:
 * - `gateway`: the real gateway app (createGatewayApp: Express, request context, metrics);
 * - `express-default`: the textbook Express path (express.json(), one route per path, res.json)
 *   doing the same work, to show what the gateway's own body reader and dispatcher save;
 * - `baseline`: plain node:http + JSON.parse + the same ajv validation/normalisation + the same
 *   Kafka produce path: the ceiling the gateway is compared with.
 * Usage: node --import tsx bench/gateway-server.ts <mode> <brokers> <topicPrefix>
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createKafkaBus, topicNames, type BusMessage, type EventBus } from '@sightline/bus';
import { createGatewayApp, EVENT_LIMITS } from '@sightline/gateway';
import { createServiceApp, listen } from '@sightline/http';
import { encodeIngestMessage, normalizeEvent, readCapturePayload } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { BENCH_TOKEN } from './gateway-messages';

const [mode, brokers, prefix] = process.argv.slice(2) as [string, string, string];
const topics = topicNames(prefix);
/** brokers `none`: a bus that acknowledges at once, to see the HTTP layer's cost alone (diagnostics). */
const bus: EventBus =
  brokers === 'none'
    ? { send: async () => undefined, subscribe: () => Promise.reject(new Error('no consumer')), ping: async () => undefined, close: async () => undefined }
    : createKafkaBus({ brokers: brokers.split(','), clientId: `bench-${mode}`, sendTimeoutMs: 5000 }, silentLogger());
const known = { status: 'known', teamId: 1 } as const;
const projectKeys = { resolve: async (token: string) => (token === BENCH_TOKEN ? known : ({ status: 'unknown' } as const)) };

/** The work every mode does once the body is parsed: validate, normalise, produce. */
async function ingest(body: unknown, ip: string | null): Promise<number> {
  const payload = readCapturePayload(body);
  if (payload.token === null || (await projectKeys.resolve(payload.token)).status !== 'known') return 401;
  const ctx = { token: payload.token, teamId: 1, nowMs: Date.now(), sentAt: payload.sentAt, ip, historicalMigration: payload.historicalMigration };
  const messages: BusMessage[] = [];
  for (const event of payload.events) {
    const r = normalizeEvent(event, ctx);
    if (r.ok) messages.push({ key: r.key, value: encodeIngestMessage(r.message) });
  }
  await bus.send(payload.historicalMigration ? topics.eventsHistorical : topics.events, messages);
  return 200;
}

async function main() {
  let port: number;
  if (mode === 'baseline') {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          res.writeHead(400).end();
          return;
        }
        ingest(body, req.socket.remoteAddress ?? null).then(
          (status) => {
            res.writeHead(status, { 'Content-Type': 'application/json' });
            res.end('{"status":1}');
          },
          () => res.writeHead(503).end(),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  } else if (mode === 'express-default') {
    const router = express.Router();
    for (const path of ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage']) {
      router.post(path, express.json({ limit: EVENT_LIMITS.wireBytes * 10 }), async (req, res) => {
        const status = await ingest(req.body, req.ip ?? null);
        res.status(status).json({ status: 1 });
      });
    }
    const metrics = createMetrics();
    const app = createServiceApp({ name: 'bench', logger: silentLogger(), metrics, readiness: [], isShuttingDown: () => false, routers: [router] });
    port = (await listen(app, { host: '127.0.0.1', port: 0 })).port;
  } else if (mode === 'gateway') {
    const app = createGatewayApp({
      bus,
      topics,
      projectKeys,
      logger: silentLogger(),
      metrics: createMetrics(),
      sendTimeoutMs: 5000,
      readiness: [],
      isShuttingDown: () => false,
    });
    port = (await listen(app, { host: '127.0.0.1', port: 0 })).port;
  } else throw new Error(`unknown mode ${mode}`);
  process.stdout.write(`LISTENING ${port}\n`);
  process.on('SIGTERM', () => {
    void bus.close().finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
