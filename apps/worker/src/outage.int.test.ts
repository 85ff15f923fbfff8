import { Kafka, logLevel } from 'kafkajs';
import { bootstrapInstance } from '@sightline/accounts';
import { createKafkaBus, topicNames, type EventBus } from '@sightline/bus';
import { createAnalyticsStore, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { normalizeEvent } from '@sightline/ingestion';
import { createJobScheduler } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import {
  createTestClickHouseDatabase,
  createTestPostgresDatabase,
  testServices,
  uniqueName,
  waitFor,
  type TestClickHouseDatabase,
  type TestPostgresDatabase,
} from '@sightline/testkit';
import { startOutageProxy, type OutageProxy } from './testing/outage-proxy';
import { createWorker, type Worker } from './worker';

/**
 * Dependency outages, caused for real: the worker reaches ClickHouse and PostgreSQL through
 * TCP relays that the test cuts (connections dropped, new ones refused) and restores.
 */
const TOKEN = 'phc_outage_test_key';

describe('worker during a dependency outage (Kafka mock, PostgreSQL, ClickHouse)', () => {
  let pgDb: TestPostgresDatabase;
  let chDb: TestClickHouseDatabase;
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
    Array.from({ length: n }, (_, i) => {
      const r = normalizeEvent(
        { event: name, distinct_id: `user-${i % 20}`, properties: { $set: { last: name } } },
        { token: TOKEN, teamId: 1, nowMs: Date.now(), sentAt: null, ip: null, historicalMigration: false },
      );
      if (!r.ok) throw new Error(r.reason);
      return { key: r.key, value: JSON.stringify(r.message) };
    });
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
    pgDb = await createTestPostgresDatabase('outage');
    chDb = await createTestClickHouseDatabase('outage');
    const chUrl = new URL(chDb.url);
    const pgUrl = new URL(pgDb.url);
    chProxy = await startOutageProxy({ host: chUrl.hostname, port: Number(chUrl.port) });
    pgProxy = await startOutageProxy({ host: pgUrl.hostname, port: Number(pgUrl.port) });
    pgUrl.host = `127.0.0.1:${pgProxy.port}`;
    db = await createMetadataStore({ url: pgUrl.toString() });
    await migratePostgres(db);
    await bootstrapInstance(db, { projectApiKey: TOKEN });
    ch = createAnalyticsStore({ url: `http://127.0.0.1:${chProxy.port}`, user: 'default', password: '', database: chDb.database });
    direct = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(ch);
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
    await ch.close();
    await direct.close();
    await db.close();
    await chProxy.close();
    await pgProxy.close();
    await chDb.drop();
    await pgDb.drop();
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
