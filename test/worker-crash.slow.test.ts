// Crash safety of the worker: under continuous load, the worker process is killed with
// SIGKILL at random moments (four times: three during catch-up, one during start-up) and
// restarted. At the end every event the bus acknowledged is counted exactly once by the
// product's trend query, none is missing, and each person ends with the last value sent for it.
import path from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { createKafkaBus, topicNames } from '@sightline/bus';
import { createAnalyticsStore, migrateClickHouse } from '@sightline/clickhouse';
import { normalizeEvent } from '@sightline/ingestion';
import { createQueryService, parseTrendFilter } from '@sightline/insights';
import { silentLogger } from '@sightline/logger';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import {
  createTestClickHouseDatabase,
  createTestPostgresDatabase,
  freePort,
  startProcess,
  testServices,
  uniqueName,
  waitFor,
  type StartedProcess,
} from '@sightline/testkit';

const ROOT = path.resolve(__dirname, '..');
const TOKEN = 'phc_worker_crash_test_key';
const KILLS = 4;
const DISTINCT_IDS = 300;
/** Short session timeout: a killed member's partitions move on after 6 s instead of 30 s. */
const SESSION_TIMEOUT_MS = 6000;

jest.setTimeout(600_000);

it('loses and duplicates nothing across repeated kill -9 of the worker under load', async () => {
  const pg = await createTestPostgresDatabase('crash');
  const chDb = await createTestClickHouseDatabase('crash');
  const db = await createMetadataStore({ url: pg.url });
  const ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
  const prefix = `${uniqueName('crash')}.`;
  const topics = topicNames(prefix);
  const producer = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('crash-producer') }, silentLogger());
  try {
    await migratePostgres(db);
    await bootstrapInstance(db, { projectApiKey: TOKEN });
    await migrateClickHouse(ch);

    const env = {
      DATABASE_URL: pg.url,
      CLICKHOUSE_URL: chDb.url,
      CLICKHOUSE_DATABASE: chDb.database,
      KAFKA_BROKERS: testServices().kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      REDIS_URL: testServices().redisUrl,
      WORKER_KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      WORKER_BATCH_SIZE: '500',
      LOG_LEVEL: 'warn',
    };
    const startWorker = async (): Promise<{ proc: StartedProcess; port: number }> => {
      const port = await freePort();
      const proc = await startProcess(process.execPath, ['--import', 'tsx', 'apps/worker/src/main.ts'], {
        cwd: ROOT,
        env: { ...env, PORT: String(port) },
      });
      return { proc, port };
    };

    // Continuous load: batches of 50 events over 300 distinct ids, each carrying a $set of
    // a sequence number. Only sends the bus acknowledged count as sent.
    const acked: string[] = [];
    const lastSeq = new Map<string, number>();
    let failedSends = 0;
    let producing = true;
    let seq = 0;
    const load = (async () => {
      while (producing) {
        const batch = Array.from({ length: 50 }, () => {
          const n = seq++;
          const distinctId = `crash-user-${n % DISTINCT_IDS}`;
          const r = normalizeEvent(
            { event: 'load', distinct_id: distinctId, properties: { $set: { seq: n } } },
            { token: TOKEN, teamId: 1, nowMs: Date.now(), sentAt: null, ip: null, historicalMigration: false },
          );
          if (!r.ok) throw new Error(r.reason);
          return { distinctId, n, uuid: r.message.uuid, key: r.key, value: JSON.stringify(r.message) };
        });
        try {
          await producer.send(topics.events, batch);
          for (const e of batch) {
            acked.push(e.uuid);
            lastSeq.set(e.distinctId, e.n);
          }
        } catch {
          failedSends++;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    // Each round: start a worker, let it join and work through the backlog that built up
    // while it was down, and kill it at a random moment of that catch-up (or, every third
    // round, at a random moment of its start-up, before it is ready).
    const kills: { afterMs: number; ready: boolean; acked: number }[] = [];
    for (let i = 0; i < KILLS; i++) {
      const worker = await startWorker();
      const duringStartup = i % 3 === 2;
      if (!duringStartup) {
        await waitFor(
          () =>
            fetch(`http://127.0.0.1:${worker.port}/_ready`).then(
              (r) => r.ok,
              () => false,
            ),
          { timeoutMs: 90_000, intervalMs: 100 },
        );
      }
      const afterMs = Math.floor(Math.random() * (duringStartup ? 6000 : 2500));
      await new Promise((r) => setTimeout(r, afterMs));
      const ready = await fetch(`http://127.0.0.1:${worker.port}/_ready`).then(
        (r) => r.ok,
        () => false,
      );
      worker.proc.kill('SIGKILL');
      await new Promise<void>((resolve) =>
        worker.proc.proc.exitCode !== null || worker.proc.proc.signalCode !== null ? resolve() : worker.proc.proc.once('exit', () => resolve()),
      );
      kills.push({ afterMs, ready, acked: acked.length });
    }
    producing = false;
    await load;
    console.log(`kills: ${JSON.stringify(kills)}; acked ${acked.length}, failed sends ${failedSends}`);
    expect(kills.filter((k) => k.ready).length).toBeGreaterThanOrEqual(KILLS / 2); // most kills hit a consuming worker
    expect(failedSends).toBe(0);

    const final = await startWorker();
    const count = async (query: string) => Number((await (await ch.query({ query, format: 'JSONEachRow' })).json<{ c: string }>())[0]!.c);
    await ch.command({ query: 'CREATE TABLE acked (uuid UUID) ENGINE = MergeTree ORDER BY uuid' });
    for (let i = 0; i < acked.length; i += 10_000) {
      await ch.insert({ table: 'acked', values: acked.slice(i, i + 10_000).map((uuid) => ({ uuid })), format: 'JSONEachRow' });
    }
    await waitFor(async () => (await count('SELECT count() AS c FROM events FINAL WHERE uuid IN (SELECT uuid FROM acked)')) === acked.length, {
      timeoutMs: 240_000,
      intervalMs: 1000,
    });
    // The product query counts each acknowledged event exactly once.
    const trend = await createQueryService({ db, ch, cacheTtlMs: 0 }).run(
      'TrendsQuery',
      { id: 1, timezone: 'UTC' },
      parseTrendFilter({ events: [{ id: 'load', type: 'events', order: 0 }], date_from: '-1d' }),
      Date.now(),
    );
    expect(trend.result[0]!.count).toBe(acked.length);
    expect(await count('SELECT count() - uniqExact(uuid) AS c FROM events FINAL')).toBe(0);

    // Persons: each ends with the last value sent for it (replays are in order).
    const persons = await db.query<{ distinct_id: string; seq: string }>(
      "SELECT d.distinct_id, p.properties->>'seq' AS seq FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = 1",
    );
    expect(persons).toHaveLength(lastSeq.size);
    for (const p of persons) expect(Number(p.seq)).toBe(lastSeq.get(p.distinct_id));
    await final.proc.stop();
  } finally {
    await producer.close();
    await ch.close();
    await db.close();
    await chDb.drop();
    await pg.drop();
  }
});
