// Faults under load on a local cluster (npm run start:cluster's startCluster): 2 gateways, 3
// workers and 2 api processes behind nginx, their own PostgreSQL, Redis and Kafka mock (8
// partitions), ClickHouse on the shared test front. A steady mixed load goes through nginx
// (batches and single events with $set, $identify and $create_alias over many users, decide
// calls, trend queries) while, one at a time: a worker is killed, a fourth worker starts, a
// gateway is killed, an api process is killed during decide load, Redis restarts, PostgreSQL
// restarts; then identify races across partitions. Every event answered 200 must be stored
// exactly once (read back by uuid), the persons must agree in PostgreSQL and ClickHouse, a
// flag change on one api process reaches the other within a second (Redis announcement), rate
// limits are one budget per key across api processes, and the person-event deletion job fires
// once across the workers. The table printed at the end gives, per fault: events sent,
// acknowledged, stored, duplicates, and the time until everything acknowledged was stored.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { createAnalyticsStore, type ClickHouseClient } from '@sightline/clickhouse';
import { startCluster, type LocalCluster } from '@sightline/cluster';
import { createTestClickHouseDatabase, uniqueName, waitFor as waitUntil, type TestClickHouseDatabase, type WaitForOptions } from '@sightline/testkit';
import { IngestClient } from './cluster-faults/ingest-client';
import { partitionOf, PersonTraffic, runLoad } from './cluster-faults/person-traffic';
import { runReads, type ReadLoad } from './cluster-faults/read-load';
import { StoredEvents } from './cluster-faults/stored-events';

jest.setTimeout(900_000);

const PARTITIONS = 8;
/** The shortest session timeout the worker accepts: a killed worker's partitions move after it. */
const SESSION_TIMEOUT_MS = 6000;
const RATE_LIMIT_BURST = 40;
/** docs/scaling.md: a flag change reaches decide on every api process within a second. */
const FLAG_CHANGE_BOUND_MS = 1000;
const RECOVERY_TIMEOUT_MS = 180_000;
const DELETION_JOB = 'person-events-deletion';

interface FaultRow {
  fault: string;
  sent: number;
  acked: number;
  stored: number;
  duplicates: number;
  replayedRows: number;
  retries: number;
  gaveUp: number;
  decideFailed: number;
  recoveryMs: number;
  note: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
class KafkaGone extends Error {}

describe('a local cluster (2 gateways, 3 workers, 2 api processes, nginx) under faults', () => {
  let dir: string;
  let chDb: TestClickHouseDatabase;
  let ch: ClickHouseClient;
  let cluster: LocalCluster;
  let client: IngestClient;
  let traffic: PersonTraffic;
  let load: { stop(): Promise<void> } | undefined;
  let reads: ReadLoad | undefined;
  let stored: StoredEvents;
  const rows: FaultRow[] = [];
  const prefix = uniqueName('cf');

  /**
   * Nothing restarts the Kafka mock cluster: once it is gone (librdkafka's mock aborts on some
   * group requests), every wait below would run to its bound. Fail at once, with its last words.
   */
  function kafkaAlive(): void {
    const kafka = cluster?.processes().find((p) => p.name === 'kafka');
    if (!kafka || kafka.state === 'running') return;
    const lastLines = kafka.log && fs.existsSync(kafka.log) ? fs.readFileSync(kafka.log, 'utf8').trim().split('\n').slice(-3).join(' | ') : '';
    throw new KafkaGone(`the Kafka mock cluster exited${kafka.exit ? ` (${kafka.exit})` : ''}: ${lastLines}`);
  }
  const waitFor = <T>(fn: () => T | Promise<T>, options: WaitForOptions) =>
    waitUntil(
      async () => {
        kafkaAlive();
        return fn();
      },
      { ...options, bailOn: (error) => error instanceof KafkaGone },
    );

  const url = (name: string) => cluster.process(name).url!;
  const api = (base: string, route: string, init: RequestInit = {}) =>
    fetch(`${base}${route}`, {
      ...init,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cluster.keys.personalApiKey}`, ...init.headers },
      signal: AbortSignal.timeout(30_000),
    });
  async function withPostgres<T>(run: (db: Client) => Promise<T>): Promise<T> {
    const db = new Client({ connectionString: cluster.env.DATABASE_URL });
    await db.connect();
    try {
      return await run(db);
    } finally {
      await db.end();
    }
  }

  /** Every app process answers /_ready (the stores and the bus reachable again). */
  async function allReady(): Promise<void> {
    const running = cluster.processes().filter((p) => /^(gateway|worker|api):/.test(p.name) && p.state === 'running');
    await waitFor(
      async () => {
        for (const p of running) {
          const response = await fetch(`${p.url}/_ready`).catch(() => undefined);
          await response?.body?.cancel();
          if (response?.status !== 200) throw new Error(`${p.name} answers ${response?.status ?? 'nothing'} on /_ready`);
        }
      },
      { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 250, description: 'every app to be ready' },
    );
  }

  /** The requests an api process let through while its rate-limit store was unreachable. */
  async function failedOpen(base: string): Promise<number> {
    const metrics = await (await fetch(`${base}/metrics`)).text();
    return Number(/^api_rate_limit_failed_open_total (\d+)/m.exec(metrics)?.[1] ?? 0);
  }

  /**
   * Every api process counts requests in Redis again: a probe no longer passes unthrottled. Its
   * /_ready can answer 200 while the throttle's own Redis connection is still reconnecting (an
   * outage of the limiter is not an outage of the API), and a burst sent then partly fails open.
   */
  async function throttlesCountAgain(): Promise<void> {
    const apis = cluster.processes().filter((p) => /^api:/.test(p.name) && p.state === 'running');
    await waitFor(
      async () => {
        for (const p of apis) {
          const before = await failedOpen(p.url!);
          const response = await api(p.url!, '/api/projects/');
          await response.body?.cancel();
          if ((await failedOpen(p.url!)) > before) throw new Error(`${p.name} still lets requests through without counting them`);
        }
      },
      { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 250, description: 'every api process to count requests in Redis again' },
    );
  }

  /** Waits until every event acknowledged in a phase other than `live` is stored; the time it took from `since`. */
  async function everythingStored(live: string, since: number): Promise<number> {
    await waitFor(
      async () => {
        await stored.record(client.acked);
        const missing = await stored.missing(live);
        if (missing > 0) throw new Error(`${missing} acknowledged events not stored yet`);
      },
      { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 1000, description: 'every acknowledged event to be stored' },
    );
    return Date.now() - since;
  }

  /**
   * Runs one fault under the load: its events are booked under its name; once `act` returns,
   * new events go to a steady phase, and the recovery time runs until everything acknowledged
   * so far is stored.
   */
  async function fault(name: string, act: () => Promise<string | void>): Promise<FaultRow> {
    client.phase = name;
    const started = Date.now();
    const note = (await act()) ?? '';
    client.phase = `steady after ${name}`;
    const recoveryMs = await everythingStored(client.phase, started);
    const counts = await stored.countsOf(name);
    const sent = client.countsOf(name);
    const row: FaultRow = {
      fault: name,
      sent: sent.sent,
      acked: sent.acked,
      stored: counts.stored,
      duplicates: counts.duplicates,
      replayedRows: counts.replayedRows,
      retries: sent.retries,
      gaveUp: sent.gaveUp,
      decideFailed: reads?.decide.get(name)?.failed.length ?? 0,
      recoveryMs,
      note,
    };
    rows.push(row);
    console.log(`[cluster-faults] ${JSON.stringify(row)} (${Math.round((Date.now() - started) / 1000)} s)`);
    expect({ fault: name, refused: sent.refused, gaveUp: sent.gaveUp, duplicates: counts.duplicates, missing: counts.acked - counts.stored }).toEqual({
      fault: name,
      refused: [],
      gaveUp: 0,
      duplicates: 0,
      missing: 0,
    });
    return row;
  }

  /** A flag created through one api process, then asked of the other until it answers it. */
  async function flagChangeReaches(from: string, to: string): Promise<number> {
    const distinctId = `${prefix}-flag-probe`;
    const decide = async () => {
      const response = await fetch(`${url(to)}/decide/?v=3`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: cluster.keys.projectApiKey, distinct_id: distinctId }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { featureFlags: Record<string, unknown> }).featureFlags;
    };
    const key = uniqueName('flag').toLowerCase();
    await decide(); // the definitions are now cached on `to`
    const created = await api(url(from), '/api/projects/1/feature_flags/', {
      method: 'POST',
      body: JSON.stringify({ key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }),
    });
    expect(created.status).toBe(201);
    const at = Date.now();
    await waitFor(async () => (await decide())[key] === true, { timeoutMs: 10_000, intervalMs: 20, description: `flag ${key} on ${to}` });
    return Date.now() - at;
  }

  async function workerJobRuns(): Promise<number> {
    let total = 0;
    for (const p of cluster.processes().filter((x) => x.role === 'worker' && x.state === 'running')) {
      const metrics = await (await fetch(`${p.url}/metrics`)).text();
      for (const m of metrics.matchAll(/^job_runs_total\{job="person-events-deletion",result="ok"\} (\d+)/gm)) total += Number(m[1]);
    }
    return total;
  }

  beforeAll(async () => {
    chDb = await createTestClickHouseDatabase('cluster_faults');
    ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-cluster-faults-'));
    const startedAt = Date.now();
    cluster = await startCluster({
      dir,
      gateways: 2,
      workers: 3,
      apis: 2,
      partitions: PARTITIONS,
      frontPort: 0,
      clickhouse: { url: chDb.url, database: chDb.database },
      baseEnv: { ...process.env, LOG_LEVEL: 'info' },
      roleEnv: {
        worker: { WORKER_KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS), WORKER_BATCH_SIZE: '500' },
        api: { RATE_LIMIT_BURST_PER_MINUTE: String(RATE_LIMIT_BURST), INSIGHT_CACHE_TTL_SECONDS: '0' },
      },
      appReadyTimeoutMs: 240_000,
      onEvent: (message) => console.log(`[cluster] ${message}`),
    });
    console.log(`[cluster-faults] cluster up in ${Date.now() - startedAt} ms at ${cluster.frontUrl}`);
    stored = new StoredEvents(ch);
    await stored.init();
    client = new IngestClient(cluster.frontUrl, cluster.keys.projectApiKey);
    traffic = new PersonTraffic(prefix, 150);
    // A few dozen events a second: the machine runs every process of the cluster (and other tests).
    load = runLoad(client, traffic, { loops: 2, pauseMs: 400 });
    reads = runReads({
      front: cluster.frontUrl,
      projectKey: cluster.keys.projectApiKey,
      personalKey: cluster.keys.personalApiKey,
      distinctIds: () => traffic.users.map((u) => u.anon),
      phase: () => client.phase,
      decideEveryMs: 150,
      trendEveryMs: 3000,
    });
  });

  afterAll(async () => {
    await load?.stop();
    await reads?.stop();
    if (rows.length > 0) {
      const table = rows.map((r) => ({ ...r, recovery: `${(r.recoveryMs / 1000).toFixed(1)} s` }));
      console.log(
        `[cluster-faults] per fault:\n${[
          'fault | sent | acknowledged | stored | duplicates | replayed rows (collapsed) | client retries | decide failures | time to recover | note',
        ]
          .concat(
            table.map((r) => [r.fault, r.sent, r.acked, r.stored, r.duplicates, r.replayedRows, r.retries, r.decideFailed, r.recovery, r.note].join(' | ')),
          )
          .join('\n')}`,
      );
    }
    await cluster?.close();
    await ch?.close();
    await chDb?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('carries the load: captures stored, decide and trends answered through nginx', async () => {
    await sleep(8000);
    await everythingStored(client.phase, Date.now());
    expect(client.acked.size).toBeGreaterThan(100);
    expect(reads!.decide.get('warm-up')).toEqual({ ok: expect.any(Number), failed: [] });
    expect(reads!.trends.get('warm-up')?.failed ?? []).toEqual([]);
  });

  it('SIGKILL of a worker: its partitions move within the session timeout, nothing lost or doubled', async () => {
    // The load goes on while worker:1's partitions wait for its session to expire.
    const row = await fault('kill worker:1 (SIGKILL)', async () => {
      await cluster.kill('worker:1', 'SIGKILL');
      await sleep(SESSION_TIMEOUT_MS);
    });
    // The session timeout, the group's rebalance and the replay of what worker:1 had not committed.
    expect(row.recoveryMs).toBeLessThan(SESSION_TIMEOUT_MS + 60_000);
  });

  it('a fourth worker joins: the group rebalances with the same guarantees', async () => {
    await fault('start a fourth worker', async () => void (await cluster.add('worker')));
    expect(cluster.processes().filter((p) => p.role === 'worker' && p.state === 'running')).toHaveLength(3);
  });

  it('SIGKILL of a gateway: nginx routes to the other; a client retrying 503 and connection errors loses nothing', async () => {
    // gateway:1 stays down (nginx keeps it in its upstream): every capture goes to gateway:2.
    await fault('kill gateway:1 (SIGKILL)', async () => {
      await cluster.kill('gateway:1', 'SIGKILL');
      await sleep(5000);
    });
  });

  it('SIGKILL of an api process during decide load: decide answers through the other; a flag change reaches the other within a second', async () => {
    const row = await fault('kill api:1 (SIGKILL) during decide load', async () => {
      await cluster.kill('api:1', 'SIGKILL');
      await sleep(5000);
    });
    expect(reads!.decide.get('kill api:1 (SIGKILL) during decide load')?.failed ?? []).toEqual([]);
    await cluster.restart('api:1');
    const flagMs = await flagChangeReaches('api:1', 'api:2');
    row.note = `flag change api:1 -> api:2 in ${flagMs} ms`;
    expect(flagMs).toBeLessThan(FLAG_CHANGE_BOUND_MS);
  });

  it('Redis restarts: the apps reconnect, flag changes travel again, rate limits stay one budget per key', async () => {
    let flagMs = 0;
    let passed = 0;
    await fault('restart Redis', async () => {
      await cluster.restartService('redis');
      await allReady();
      await throttlesCountAgain();
      flagMs = await flagChangeReaches('api:2', 'api:1');
      // A key of its own, asked alternately of both api processes directly: one budget.
      const created = await api(cluster.frontUrl, '/api/personal_api_keys/', {
        method: 'POST',
        body: JSON.stringify({ label: 'rate limit check', scopes: ['project:read'] }),
      });
      expect(created.status).toBe(201);
      const { value } = (await created.json()) as { value: string };
      const statuses: number[] = [];
      for (let i = 0; i < RATE_LIMIT_BURST + 10; i++) {
        const response = await fetch(`${url(i % 2 === 0 ? 'api:1' : 'api:2')}/api/projects/`, { headers: { authorization: `Bearer ${value}` } });
        await response.body?.cancel();
        statuses.push(response.status);
      }
      passed = statuses.filter((s) => s === 200).length;
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      return `flag change api:2 -> api:1 in ${flagMs} ms; rate limit ${passed} of ${statuses.length} passed across both api processes`;
    });
    expect(flagMs).toBeLessThan(FLAG_CHANGE_BOUND_MS);
    expect(passed).toBe(RATE_LIMIT_BURST);
  });

  it('PostgreSQL restarts: the apps reconnect, nothing acknowledged is lost, the deletion job fires once across three workers', async () => {
    // A person deleted with its events: the task the job works on.
    const doomed = `${prefix}-doomed`;
    const doomedClient = new IngestClient(cluster.frontUrl, cluster.keys.projectApiKey);
    expect(await doomedClient.send(Array.from({ length: 5 }, () => ({ event: 'doomed', distinct_id: doomed, properties: { $set: { doomed: true } } })))).toBe(
      true,
    );
    const personUuid = await waitFor(
      async () => {
        const response = await api(cluster.frontUrl, `/api/projects/1/persons/?distinct_id=${doomed}`);
        const body = (await response.json()) as { results: { uuid: string }[] };
        return body.results[0]?.uuid ?? false;
      },
      { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 250, description: 'the doomed person' },
    );
    const countDoomed = async () =>
      Number(
        (
          await (
            await ch.query({
              query: 'SELECT count() AS c FROM events WHERE team_id = 1 AND distinct_id = {d:String}',
              query_params: { d: doomed },
              format: 'JSONEachRow',
            })
          ).json<{ c: string }>()
        )[0]!.c,
      );
    await waitFor(async () => (await countDoomed()) === 5, { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 250, description: 'the doomed events' });
    const deleted = await api(cluster.frontUrl, `/api/projects/1/persons/${personUuid}/?delete_events=true`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);

    await fault('restart PostgreSQL', async () => {
      await cluster.restartService('postgres');
      await allReady();
    });

    // Every worker registered the same weekly scheduler: one run is planned, not three.
    const queue = new Queue(DELETION_JOB, { connection: { url: cluster.env.REDIS_URL }, prefix: 'sightline' });
    try {
      const planned = await queue.getDelayed();
      expect(planned).toHaveLength(1);
      const runsBefore = await workerJobRuns();
      // Its time has come: the run is handed to exactly one of the three workers.
      await planned[0]!.promote();
      await waitFor(async () => (await withPostgres((db) => db.query('SELECT 1 FROM queued_deletions WHERE done_at IS NULL'))).rowCount === 0, {
        timeoutMs: 120_000,
        intervalMs: 500,
        description: 'the deletion task to be done',
      });
      await waitFor(async () => (await workerJobRuns()) - runsBefore === 1, { timeoutMs: 30_000, intervalMs: 250, description: 'one job run' });
      await sleep(3000);
      expect((await workerJobRuns()) - runsBefore).toBe(1);
      expect(await countDoomed()).toBe(0);
      // The next Sunday's run is planned once again.
      expect(await queue.getDelayed()).toHaveLength(1);
    } finally {
      await queue.close();
    }
  });

  it('identify races across partitions under load: each pair ends as one person', async () => {
    // Pairs whose two ids go to different partitions (so, mostly, to different workers), each
    // id with a person already; then, at once, a burst of $set on the anonymous id and the
    // $identify that merges it into the user's person.
    const pairs = Array.from({ length: 400 }, (_, i) => ({ anon: `${prefix}-race-anon-${i}`, user: `${prefix}-race-user-${i}` }))
      .filter((p) => partitionOf(cluster.keys.projectApiKey, p.anon, PARTITIONS) !== partitionOf(cluster.keys.projectApiKey, p.user, PARTITIONS))
      .slice(0, 30);
    expect(pairs).toHaveLength(30);
    const raceClient = new IngestClient(cluster.frontUrl, cluster.keys.projectApiKey);
    raceClient.phase = 'cross-partition setup';
    await raceClient.send(
      pairs.flatMap((p) => [
        { event: '$pageview', distinct_id: p.anon, properties: { $set: { side: 'anon' } } },
        { event: '$pageview', distinct_id: p.user, properties: { $set: { side: 'user' } } },
      ]),
    );
    await withPostgres((db) =>
      waitFor(
        async () => (await db.query('SELECT 1 FROM person_distinct_ids WHERE distinct_id = ANY($1)', [pairs.flatMap((p) => [p.anon, p.user])])).rowCount === 60,
        { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 250, description: 'the persons of the race pairs' },
      ),
    );
    raceClient.phase = 'cross-partition identify race';
    const started = Date.now();
    await Promise.all(
      pairs.flatMap((p) => [
        raceClient.send([1, 2, 3].map((n) => ({ event: '$pageview', distinct_id: p.anon, properties: { $set: { [`late_${n}`]: n } } }))),
        raceClient.send([{ event: '$identify', distinct_id: p.user, properties: { $anon_distinct_id: p.anon, $set: { identified: true } } }]),
      ]),
    );
    for (const [uuid, phase] of raceClient.acked) client.acked.set(uuid, phase);
    for (const [phase, counts] of raceClient.counts) client.counts.set(phase, counts);
    const counts = raceClient.countsOf('cross-partition identify race');
    const recoveryMs = await everythingStored(client.phase, started);
    const problems = await withPostgres(async (db) => {
      const found: string[] = [];
      for (const p of pairs) {
        const { rows: persons } = await db.query<{ uuid: string; properties: Record<string, unknown> }>(
          'SELECT DISTINCT p.uuid::text AS uuid, p.properties FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = 1 AND d.distinct_id = ANY($1)',
          [[p.anon, p.user]],
        );
        if (persons.length !== 1) found.push(`${p.user}: ${persons.length} persons`);
        else if (!['late_1', 'late_2', 'late_3', 'identified'].every((k) => k in persons[0]!.properties))
          found.push(`${p.user}: ${JSON.stringify(persons[0]!.properties)}`);
      }
      return found;
    });
    const storedCounts = await stored.countsOf('cross-partition identify race');
    rows.push({
      fault: 'cross-partition identify race (30 pairs)',
      sent: counts.sent,
      acked: counts.acked,
      stored: storedCounts.stored,
      duplicates: storedCounts.duplicates,
      replayedRows: storedCounts.replayedRows,
      retries: counts.retries,
      gaveUp: counts.gaveUp,
      decideFailed: 0,
      recoveryMs,
      note: `${pairs.length - problems.length} of ${pairs.length} pairs one person with every property`,
    });
    expect(problems).toEqual([]);
  });

  it('after the faults: every acknowledged event stored once; every user one person, the same in PostgreSQL and ClickHouse', async () => {
    await load!.stop();
    await reads!.stop();
    load = undefined;
    const finished = Date.now();
    await everythingStored('none', finished);
    console.log(`[cluster-faults] the last events stored ${Date.now() - finished} ms after the load stopped`);
    const all = await stored.countsOf('*');
    expect(all.stored).toBe(all.acked);
    expect(all.duplicates).toBe(0);

    const groups = traffic.expectedGroups();
    const ids = groups.flat();
    const pgPersons = await withPostgres(async (db) => {
      const { rows: found } = await db.query<{ distinct_id: string; uuid: string }>(
        'SELECT d.distinct_id, p.uuid::text AS uuid FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = 1 AND d.distinct_id = ANY($1)',
        [ids],
      );
      const { rows: orphans } = await db.query('SELECT p.uuid FROM persons p WHERE NOT EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.person_id = p.id)');
      expect(orphans).toEqual([]);
      return new Map(found.map((r) => [r.distinct_id, r.uuid]));
    });
    const chPersons = new Map(
      (
        await (
          await ch.query({
            query: `SELECT distinct_id, toString(argMax(person_id, version)) AS uuid FROM person_distinct_id2 WHERE team_id = 1 AND distinct_id IN {ids:Array(String)} GROUP BY distinct_id`,
            query_params: { ids },
            format: 'JSONEachRow',
          })
        ).json<{ distinct_id: string; uuid: string }>()
      ).map((r) => [r.distinct_id, r.uuid]),
    );
    const deletedCopies = new Set(
      (
        await (
          await ch.query({
            query: `SELECT toString(id) AS id FROM person WHERE team_id = 1 GROUP BY id HAVING argMax(is_deleted, version) = 1`,
            format: 'JSONEachRow',
          })
        ).json<{ id: string }>()
      ).map((r) => r.id),
    );
    const problems: string[] = [];
    for (const group of groups) {
      const uuids = new Set(group.map((id) => pgPersons.get(id) ?? `no person for ${id}`));
      if (uuids.size !== 1) problems.push(`${group.join(', ')}: PostgreSQL ${[...uuids].join(', ')}`);
      for (const id of group) {
        if (chPersons.get(id) !== pgPersons.get(id)) problems.push(`${id}: ClickHouse ${chPersons.get(id)}, PostgreSQL ${pgPersons.get(id)}`);
        if (deletedCopies.has(pgPersons.get(id) ?? '')) problems.push(`${id}: its person is deleted in ClickHouse`);
      }
    }
    const merged = groups.filter((g) => g.length > 1).length;
    console.log(`[cluster-faults] ${client.acked.size} events acknowledged, ${groups.length} users (${merged} identified), ${problems.length} person problems`);
    rows.push({
      fault: 'all phases',
      sent: [...client.counts.values()].reduce((n, c) => n + c.sent, 0),
      acked: all.acked,
      stored: all.stored,
      duplicates: all.duplicates,
      replayedRows: all.replayedRows,
      retries: [...client.counts.values()].reduce((n, c) => n + c.retries, 0),
      gaveUp: [...client.counts.values()].reduce((n, c) => n + c.gaveUp, 0),
      decideFailed: [...reads!.decide.values()].reduce((n, c) => n + c.failed.length, 0),
      recoveryMs: Date.now() - finished,
      note: `${groups.length} users, ${merged} identified; trend queries failed: ${[...reads!.trends].map(([p, c]) => `${p} ${c.failed.length}/${c.ok + c.failed.length}`).join(', ')}`,
    });
    expect(problems).toEqual([]);
  });
});
