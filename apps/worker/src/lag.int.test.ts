import request from 'supertest';
import { createKafkaBus, topicNames, type EventBus } from '@sightline/bus';
import { createJobScheduler } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createTestStores, startOutageProxy, testServices, uniqueName, waitFor, type OutageProxy, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createWorker, createWorkerHttpApp, type Worker } from './worker';

/**
 * Consumer lag on the Kafka mock, read from the brokers: exported on /metrics and, while it
 * keeps growing (ClickHouse cut off, events still arriving), failing /_ready.
 */
const TOKEN = 'phc_lag_test_key';

describe('worker consumer lag (Kafka mock)', () => {
  let stores: TestStores;
  let chProxy: OutageProxy;
  let bus: EventBus;
  let worker: Worker;
  let app: ReturnType<typeof createWorkerHttpApp>;
  const topics = topicNames(`${uniqueName('lag')}.`);
  const group = `${topics.events}-writer`;
  const events = (n: number) => Array.from({ length: n }, (_, i) => busMessage({ event: 'e', distinct_id: `user-${i % 7}` }, { token: TOKEN }));
  const metricsText = async () => (await request(app).get('/metrics')).text;
  /** The lag this worker reports over its partitions (it owns them all: the only member). */
  const ownLag = async () =>
    [...(await metricsText()).matchAll(new RegExp(`^worker_consumer_lag_messages\\{group="${group.replace(/\./g, '\\.')}",[^}]*\\} (\\d+)$`, 'gm'))].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );

  beforeAll(async () => {
    const clickhouse = new URL(testServices().clickhouseUrl);
    chProxy = await startOutageProxy({ host: clickhouse.hostname, port: Number(clickhouse.port) });
    stores = await createTestStores('lag', { projectApiKey: TOKEN }, { clickhouseUrl: () => `http://127.0.0.1:${chProxy.port}` });
    bus = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('lag') }, silentLogger());
    const metrics = createMetrics();
    const scheduler = createJobScheduler({ redisUrl: testServices().redisUrl, prefix: uniqueName('jobs') }, silentLogger());
    worker = createWorker({
      bus,
      topics,
      ch: stores.ch,
      db: stores.db,
      scheduler,
      logger: silentLogger(),
      metrics,
      consumer: { lagReadinessTimeoutMs: 3_000, lagPollMs: 250 },
    });
    app = createWorkerHttpApp({ worker, readiness: [], isShuttingDown: () => false, logger: silentLogger(), metrics });
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await bus.close();
    await stores.close();
    await chProxy.close();
  });

  it('reports the lag per partition and per group, and is ready while it keeps up', async () => {
    await bus.send(topics.events, events(30));
    await waitFor(async () => (await metricsText()).includes(`worker_consumer_group_lag_messages{group="${group}",topic="${topics.events}"} 0`), {
      timeoutMs: 60_000,
    });
    // Every partition is reported, by this worker (the group's only member).
    expect(await metricsText()).toMatch(new RegExp(`worker_consumer_lag_messages\\{group="${group.replace(/\./g, '\\.')}",topic="[^"]+",partition="0"\\} 0`));
    await waitFor(async () => (await request(app).get('/_ready')).status === 200, { timeoutMs: 30_000 });
  });

  it('fails readiness while the lag keeps growing, and recovers once the worker catches up', async () => {
    await chProxy.cut();
    const sending = setInterval(() => void bus.send(topics.events, events(5)).catch(() => undefined), 200);
    try {
      await waitFor(async () => (await ownLag()) > 0, { timeoutMs: 30_000 });
      await waitFor(
        async () => {
          const res = await request(app).get('/_ready');
          return res.status === 503 && JSON.stringify(res.body).includes('lag of this worker');
        },
        { timeoutMs: 60_000 },
      );
      // Readiness reads the growth at the moment it is asked, the gauge as of the last sample: on a
      // loaded machine a sample may come late, so the gauge is awaited rather than read at once.
      const growing = new RegExp(`worker_consumer_lag_growing_seconds\\{group="${group.replace(/\./g, '\\.')}"\\} [1-9]`);
      await waitFor(async () => growing.test(await metricsText()), { timeoutMs: 10_000 });
      expect(await metricsText()).toMatch(growing);
    } finally {
      clearInterval(sending);
      await chProxy.restore();
    }
    await waitFor(async () => (await ownLag()) === 0 && (await request(app).get('/_ready')).status === 200, { timeoutMs: 90_000 });
  });
});
