/**
 * Test helpers for the gateway's own tests: a gateway over the in-process bus (as an app for
 * supertest, or on a real socket), and a raw HTTP client (fetch and superagent rewrite bodies and headers; these tests
 * need exact bytes, Content-Length and keep-alive control).
 */
import http from 'node:http';
import type { Express } from 'express';
import { createInProcessBus, topicNames, type ConsumedMessage, type EventBus } from '@sightline/bus';
import { listen, type RequestTimeouts, type RunningServer } from '@sightline/http';
import { decodeIngestMessage, type IngestMessage } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { createGatewayApp } from './app';
import type { KeyResolution } from './project-keys';

export const TEST_TOKEN = 'phc_known_token';
export const testTopics = topicNames('');

export interface TestGatewayOptions {
  keys?: (token: string) => KeyResolution;
  bus?: EventBus;
  sendTimeoutMs?: number;
  maxInflightRequests?: number;
}

export interface TestGatewayApp {
  app: Express;
  bus: EventBus;
  metrics: Metrics;
  /** What the bus got on `topic` (the events topic by default), decoded. */
  received(topic?: string): { key: string | null; value: IngestMessage }[];
}

/** The gateway's app over the in-process bus, not listening (for supertest). TEST_TOKEN is project 7. */
export async function createTestGatewayApp(options: TestGatewayOptions = {}): Promise<TestGatewayApp> {
  const bus = options.bus ?? createInProcessBus(silentLogger());
  const received: Record<string, ConsumedMessage[]> = {};
  for (const topic of [testTopics.events, testTopics.eventsHistorical]) {
    received[topic] = [];
    await bus.subscribe({ groupId: 'test', topic, handler: async (b) => void received[topic]!.push(...b.messages) });
  }
  const metrics = createMetrics();
  const app = createGatewayApp({
    bus,
    topics: testTopics,
    projectKeys: {
      resolve: async (t) => (options.keys ? options.keys(t) : t === TEST_TOKEN ? { status: 'known', teamId: 7 } : { status: 'unknown' }),
    },
    logger: silentLogger(),
    metrics,
    sendTimeoutMs: options.sendTimeoutMs ?? 2000,
    maxInflightRequests: options.maxInflightRequests,
    readiness: [],
    isShuttingDown: () => false,
  });
  return {
    app,
    bus,
    metrics,
    received: (topic = testTopics.events) => received[topic]!.map((m) => ({ key: m.key, value: decodeIngestMessage(m.value) as IngestMessage })),
  };
}

export interface TestGateway extends Omit<TestGatewayApp, 'app'> {
  server: RunningServer;
  port: number;
  close(): Promise<void>;
}

/** The same app on a real socket on a free loopback port. */
export async function startTestGateway(options: TestGatewayOptions & { timeouts?: Partial<RequestTimeouts> } = {}): Promise<TestGateway> {
  const { app, bus, metrics, received } = await createTestGatewayApp(options);
  const server = await listen(app, { host: '127.0.0.1', port: 0, timeouts: options.timeouts });
  return {
    server,
    port: server.port,
    bus,
    metrics,
    received,
    close: async () => {
      await server.close();
      await bus.close();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  localPort: number | undefined;
}

export function rawRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string | number>; body?: Buffer | string; agent?: http.Agent },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'POST', path: options.path, headers: options.headers, agent: options.agent });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
          localPort: req.socket?.localPort,
        }),
      );
    });
    req.end(options.body);
  });
}

/** Parses an error body, failing the test with the text when it is not JSON. */
export function jsonBody(res: RawResponse): unknown {
  try {
    return JSON.parse(res.text);
  } catch {
    throw new Error(`status ${res.status}: body is not JSON: ${res.text.slice(0, 200)}`);
  }
}
