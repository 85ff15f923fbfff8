import { Kafka, logLevel } from 'kafkajs';
import { createKafkaBus, topicNames, type EventBus } from '@sightline/bus';
import { createAnalyticsStore, type ClickHouseClient } from '@sightline/clickhouse';
import { createJobScheduler } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { testServices, uniqueName, waitFor, startOutageProxy, type OutageProxy, createTestStores, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createWorker, type Worker } from './worker';

/**
 * Dependency outages, caused for real: the worker reaches ClickHouse and PostgreSQL through
 * TCP relays that the test cuts (connections dropped, new ones refused) and restores.
 */
const TOKEN = 'phc_outage_test_key';

describe('worker during a dependency outage (Kafka mock, PostgreSQL, ClickHouse)', () => {
  let stores: TestStores;
  let chProxy: OutageProxy;
  let pgProxy: OutageProxy;
  let db: MetadataStore;
  let ch: ClickHouseClient;
  let direct: ClickHouseClient;
  let bus: EventBus;
  let worker: Worker;
  let metrics: Metrics;
  const topics = topicNames(`${uniqueName('outage')}.`);
  const kafka = new Kafka({ clientId: uniqueName('outage-admin'), brokers: testServices().kafkaBrokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();

  const events = (name: string, n: number) =>
    Array.from({ length: n }, (_, i) => busMessage({ event: name, distinct_id: `user-${i % 20}`, properties: { $set: { last: name } } }, { token: TOKEN }));
  const count = async (sql: string) => Number((await (await direct.query({ query: sql, format: 'JSONEachRow' })).json<{ c: string }>())[0]!.c);
  const committed = async () => {
    const [topic] = await admin.fetchOffsets({ groupId: `${topics.events}-writer`, topics: [topics.events] });
    return topic!.partitions
      .map((p) => `${p.partition}:${p.offset}`)
      .sort()
      .join(',');
  };
  const outageBatches = async () => (await metrics.consumerBatches.get()).values.filter((v) => v.labels.result === 'outage').reduce((a, v) => a + v.value, 0);

  beforeAll(async () => {
    // Ports of the shared test services, known before the relays exist.
    const services = new URL(testServices().clickhouseUrl);
    chProxy = await startOutageProxy({ host: services.hostname, port: Number(services.port) });
    const pgAdmin = new URL(testServices().postgresAdminUrl);
    pgProxy = await startOutageProxy({ host: pgAdmin.hostname, port: Number(pgAdmin.port) });
    stores = await createTestStores(
      'outage',
      { projectApiKey: TOKEN },
      {
        postgresUrl: (real) => Object.assign(real, { host: `127.0.0.1:${pgProxy.port}` }).toString(),
        clickhouseUrl: () => `http://127.0.0.1:${chProxy.port}`,
      },
    );
    ({ db, ch } = stores);
    direct = createAnalyticsStore({ url: stores.clickhouseUrl, user: 'default', password: '', database: stores.clickhouseDatabase });
    await admin.connect();
    bus = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('outage') }, silentLogger());
    metrics = createMetrics();
    const scheduler = createJobScheduler({ redisUrl: testServices().redisUrl, prefix: uniqueName('jobs') }, silentLogger());
    worker = createWorker({ bus, topics, ch, db, scheduler, logger: silentLogger(), metrics });
    await worker.start();
    await bus.send(topics.events, events('warmup', 40));
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event = 'warmup'")) === 40, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    await worker.stop();
    await bus.close();
    await admin.disconnect();
    await direct.close();
    await stores.close();
    await chProxy.close();
    await pgProxy.close();
  });

  it.each([
    ['ClickHouse', () => chProxy],
    ['PostgreSQL', () => pgProxy],
  ])('%s unreachable: nothing is committed or dead-lettered, and everything arrives after recovery', async (name, proxy) => {
    const event = `during-${name}`;
    await waitFor(async () => (await committed()) !== '', { timeoutMs: 30_000 });
    const offsetsBefore = await committed();
    const outagesBefore = await outageBatches();
    await proxy().cut();
    try {
      await bus.send(topics.events, events(event, 200));
      // The worker tried (and failed on the dependency) several times …
      await waitFor(async () => (await outageBatches()) >= outagesBefore + 5, { timeoutMs: 60_000 });
      // … without committing, dead-lettering or writing anything.
      expect(await committed()).toBe(offsetsBefore);
      expect(await count('SELECT count() AS c FROM dead_letters')).toBe(0);
      expect(await count(`SELECT count() AS c FROM events WHERE event = '${event}'`)).toBe(0);
    } finally {
      await proxy().restore();
    }
    await waitFor(async () => (await count(`SELECT count() AS c FROM events FINAL WHERE event = '${event}'`)) === 200, { timeoutMs: 90_000 });
    await waitFor(async () => (await committed()) !== offsetsBefore, { timeoutMs: 30_000 });
    expect(await count('SELECT count() AS c FROM dead_letters')).toBe(0);
  });
});
