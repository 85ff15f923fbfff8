import { bootstrapInstance } from '@sightline/accounts';
import { createKafkaBus, topicNames, type EventBus } from '@sightline/bus';
import { createAnalyticsStore, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { normalizeEvent, personUuidFor } from '@sightline/ingestion';
import { createJobScheduler } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
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
import { runPersonEventsDeletion } from './jobs/person-events-deletion.job';
import { createWorker, type Worker } from './worker';

const TOKEN = 'phc_worker_test_key';

describe('worker (Kafka mock, PostgreSQL, ClickHouse)', () => {
  let pgDb: TestPostgresDatabase;
  let chDb: TestClickHouseDatabase;
  let db: MetadataStore;
  let ch: ClickHouseClient;
  let bus: EventBus;
  let worker: Worker;
  const topics = topicNames(`${uniqueName('w')}.`);

  const message = (event: string, distinctId: string, teamId: number | null = 1, token = TOKEN) => {
    const r = normalizeEvent(
      { event, distinct_id: distinctId, properties: { n: 1 } },
      { token, teamId, nowMs: Date.now(), sentAt: null, ip: '10.0.0.1', historicalMigration: false },
    );
    if (!r.ok) throw new Error(r.reason);
    return { key: r.key, value: JSON.stringify(r.message) };
  };
  const count = async (sql: string) => Number((await (await ch.query({ query: sql, format: 'JSONEachRow' })).json<{ c: string }>())[0]!.c);

  beforeAll(async () => {
    pgDb = await createTestPostgresDatabase('worker');
    chDb = await createTestClickHouseDatabase('worker');
    db = await createMetadataStore({ url: pgDb.url });
    await migratePostgres(db);
    await bootstrapInstance(db, { projectApiKey: TOKEN });
    ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(ch);
    bus = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('worker') }, silentLogger());
    const scheduler = createJobScheduler({ redisUrl: testServices().redisUrl, prefix: uniqueName('jobs') }, silentLogger());
    worker = createWorker({ bus, topics, ch, db, scheduler, logger: silentLogger(), metrics: createMetrics() });
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await bus.close();
    await ch.close();
    await db.close();
    await chDb.drop();
    await pgDb.drop();
  });

  it('writes events with their deterministic person id, resolving the team when the gateway could not', async () => {
    await bus.send(topics.events, [message('a', 'alice'), message('a', 'bob'), message('b', 'alice', null)]);
    await waitFor(async () => (await count('SELECT count() AS c FROM events')) === 3, { timeoutMs: 60_000 });
    const rows = await (
      await ch.query({
        query:
          "SELECT distinct_id, toString(person_id) AS p, toString(team_id) AS team_id, JSONExtractString(properties, '$ip') AS ip FROM events WHERE distinct_id = 'alice' ORDER BY event",
        format: 'JSONEachRow',
      })
    ).json<{ p: string; team_id: string; ip: string }>();
    expect(rows).toEqual([
      { distinct_id: 'alice', p: personUuidFor(1, 'alice'), team_id: '1', ip: '10.0.0.1' },
      { distinct_id: 'alice', p: personUuidFor(1, 'alice'), team_id: '1', ip: '10.0.0.1' },
    ]);
  });

  it('dead-letters a poison message and keeps the partition flowing', async () => {
    const key = `${TOKEN}:poison`;
    await bus.send(topics.events, [{ key, value: '{not json' }, { key, value: JSON.stringify({ uuid: 'x' }) }, message('after-poison', 'poison')]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event = 'after-poison'")) === 1, { timeoutMs: 60_000 });
    await waitFor(async () => (await count('SELECT count() AS c FROM dead_letters')) === 2, { timeoutMs: 60_000 });
    const letters = await (
      await ch.query({ query: 'SELECT topic, error, headers FROM dead_letters ORDER BY error', format: 'JSONEachRow' })
    ).json<{ topic: string; error: string; headers: Record<string, string> }>();
    expect(letters.map((l) => l.topic)).toEqual([topics.events, topics.events]);
    expect(letters.map((l) => l.error)).toEqual([expect.stringMatching(/field .* missing/), expect.stringMatching(/not JSON/)]);
    expect(letters[0]!.headers['x-step']).toBe('parse');
  });

  it('drops events of an unknown project without blocking others', async () => {
    await bus.send(topics.events, [message('ghost', 'g', null, 'phc_nobody'), message('real', 'r')]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event = 'real'")) === 1, { timeoutMs: 60_000 });
    expect(await count("SELECT count() AS c FROM events WHERE event = 'ghost'")).toBe(0);
  });

  it('consumes the historical topic in its own group, keeping timestamps', async () => {
    const r = normalizeEvent(
      { event: 'old', distinct_id: 'h', timestamp: '2021-05-01T12:00:00Z' },
      { token: TOKEN, teamId: 1, nowMs: Date.now(), sentAt: null, ip: null, historicalMigration: true },
    );
    if (!r.ok) throw new Error(r.reason);
    await bus.send(topics.eventsHistorical, [{ key: r.key, value: JSON.stringify(r.message) }]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event = 'old' AND toDate(timestamp) = '2021-05-01'")) === 1, {
      timeoutMs: 60_000,
    });
  });

  it('the weekly job deletes the events of queued person deletions, once', async () => {
    await db.query('INSERT INTO queued_deletions (team_id, person_uuid) VALUES (1, $1)', [personUuidFor(1, 'bob')]);
    const before = await count("SELECT count() AS c FROM events WHERE distinct_id = 'bob'");
    expect(before).toBeGreaterThan(0);
    expect(await runPersonEventsDeletion({ db, ch, logger: silentLogger() })).toBe(1);
    expect(await count("SELECT count() AS c FROM events WHERE distinct_id = 'bob'")).toBe(0);
    expect(await count("SELECT count() AS c FROM events WHERE distinct_id = 'alice'")).toBe(2);
    expect(await runPersonEventsDeletion({ db, ch, logger: silentLogger() })).toBe(0);
  });

  it('reports its consumer loops alive', async () => {
    for (const check of worker.liveness) await expect(Promise.resolve(check.check())).resolves.toBeUndefined();
  });
});
