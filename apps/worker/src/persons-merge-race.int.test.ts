import { createInProcessBus, topicNames, type BatchHandler, type ConsumedMessage, type EventBus } from '@sightline/bus';
import type { ClickHouseClient } from '@sightline/clickhouse';
import type { RawEvent } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, type MetadataStore, type QueryOptions, type Sql } from '@sightline/postgres';
import { createTestStores, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createEventsConsumer } from './events.consumer';
import { StepError } from './pipeline/step-result';

/**
 * Two workers at once on merges across partitions: an `$identify` or `$create_alias` handled by
 * one worker (the partition of its distinct id) while another worker handles events of the other
 * distinct id (another partition), on the same PostgreSQL and ClickHouse. Each pair must end as
 * one person, in PostgreSQL and in ClickHouse's copies, with no update lost and no person left
 * over. PostHog's approach (nodejs/src/worker/ingestion/persons/person-merge-service.ts): the
 * persons are read with row locks inside the merge transaction, the version goes to
 * max(versions) + 1, and a transaction that lost a race is retried from a fresh read; here the
 * whole run is retried (the bus's retry of an outage: a unique-key race or deadlock is one).
 */
const TOKEN = 'phc_merge_race_test_key';
const TEAM = 1;
const ROUNDS = 6;

interface Scenario {
  name: string;
  /** Events before the race (one worker, in order). */
  before: (id: (n: string) => string) => RawEvent[];
  /** What the two workers handle at the same moment. */
  first: (id: (n: string) => string) => RawEvent;
  second: (id: (n: string) => string) => RawEvent;
  /** Distinct ids that must end on one person, and properties it must have. */
  together: string[];
  properties: Record<string, unknown>;
}

const pageview = (distinctId: string, set: Record<string, unknown> = {}): RawEvent => ({
  event: '$pageview',
  distinct_id: distinctId,
  properties: { $set: set },
});
const identify = (distinctId: string, anon: string, set: Record<string, unknown> = {}): RawEvent => ({
  event: '$identify',
  distinct_id: distinctId,
  properties: { $anon_distinct_id: anon, $set: set },
});
const alias = (distinctId: string, aliasId: string): RawEvent => ({ event: '$create_alias', distinct_id: distinctId, properties: { alias: aliasId } });

const SCENARIOS: Scenario[] = [
  {
    name: 'identify in both directions, two existing anonymous persons',
    before: (id) => [pageview(id('x'), { px: 1 }), pageview(id('y'), { py: 1 })],
    first: (id) => identify(id('x'), id('y')),
    second: (id) => identify(id('y'), id('x')),
    together: ['x', 'y'],
    properties: { px: 1, py: 1 },
  },
  {
    name: 'alias in both directions, two existing anonymous persons',
    before: (id) => [pageview(id('x'), { px: 1 }), pageview(id('y'), { py: 1 })],
    first: (id) => alias(id('x'), id('y')),
    second: (id) => alias(id('y'), id('x')),
    together: ['x', 'y'],
    properties: { px: 1, py: 1 },
  },
  {
    name: 'two identifies claiming the same anonymous person',
    before: (id) => [pageview(id('y'), { py: 1 })],
    first: (id) => identify(id('x'), id('y'), { pxx: 1 }),
    second: (id) => identify(id('z'), id('y'), { pz: 1 }),
    together: ['x', 'y', 'z'],
    properties: { py: 1, pxx: 1, pz: 1 },
  },
  {
    name: 'identify creating a person while the anonymous id gets its first event',
    before: () => [],
    first: (id) => identify(id('x'), id('y')),
    second: (id) => pageview(id('y'), { late: 1 }),
    together: ['x', 'y'],
    properties: { late: 1 },
  },
  {
    name: 'a $set on the anonymous person while it is merged away',
    before: (id) => [pageview(id('x'), { px: 1 }), pageview(id('y'), { py: 1 })],
    first: (id) => identify(id('x'), id('y')),
    second: (id) => pageview(id('y'), { late: 1 }),
    together: ['x', 'y'],
    properties: { px: 1, py: 1, late: 1 },
  },
];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long each worker holds its transaction open after reading the persons: the window the other worker races into. */
const PAUSE_AFTER_PERSON_READ_MS = 100;

/**
 * The store a worker gets, pausing inside each transaction right after the persons are read
 * (the statement that reads, and locks, a run's persons): both workers then read before either
 * writes, unless the first one's locks hold the second back. Without the pause the two
 * transactions rarely overlap on a quiet machine, and the race would be left to chance.
 */
function pausingAfterPersonRead(db: MetadataStore): MetadataStore {
  const pausing = (tx: Sql): Sql => ({
    query: async <R>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
      const rows = await tx.query<R>(text, params, options);
      if (text.includes('JOIN persons p ON p.id = d.person_id')) await sleep(PAUSE_AFTER_PERSON_READ_MS);
      return rows;
    },
    exec: (script) => tx.exec(script),
  });
  return {
    query: <R>(text: string, params?: readonly unknown[], options?: QueryOptions) => db.query<R>(text, params, options),
    exec: (script) => db.exec(script),
    transaction: (fn) => db.transaction((tx) => fn(pausing(tx))),
    oneTransactionAtATime: db.oneTransactionAtATime,
    ping: () => db.ping(),
    close: () => db.close(),
  };
}

describe('merges across partitions handled by two workers at once', () => {
  let stores: TestStores;
  let ch: ClickHouseClient;
  const workerDbs: MetadataStore[] = [];
  let workers: BatchHandler[];
  let offset = 0;
  let clock = Date.parse('2026-03-01T00:00:00Z');
  let retries = 0;
  /** What a worker gave up on (a run failing on its data is split until the message is dead-lettered). */
  const deadLetters: string[] = [];
  let bus: EventBus;

  beforeAll(async () => {
    stores = await createTestStores('merge_race', { projectApiKey: TOKEN });
    ch = stores.ch;
    bus = createInProcessBus(silentLogger());
    await bus.subscribe({
      groupId: 'race-dead-letters',
      topic: topicNames('race.').deadLetter,
      handler: async ({ messages }) => void deadLetters.push(...messages.map((m) => `${m.headers['x-step']}: ${m.headers['x-error']}`)),
    });
    // Two workers: each its own pool and pipeline, as two processes would have.
    workers = await Promise.all(
      [0, 1].map(async () => {
        const db = await createMetadataStore({ url: stores.postgresUrl });
        workerDbs.push(db);
        return createEventsConsumer({
          ch,
          db: pausingAfterPersonRead(db),
          bus,
          topics: topicNames('race.'),
          resolveTeam: async () => TEAM,
          metrics: createMetrics(),
          logger: silentLogger(),
        });
      }),
    );
  });
  afterAll(async () => {
    await bus.close();
    await Promise.all(workerDbs.map((db) => db.close()));
    await stores.close();
  });

  const message = (raw: RawEvent): ConsumedMessage => {
    clock += 1000;
    const { key, value } = busMessage({ timestamp: new Date(clock).toISOString(), ...raw }, { token: TOKEN, teamId: TEAM, nowMs: clock });
    return { key, value: Buffer.from(value), headers: {}, offset: String(offset++) };
  };

  /** What the bus does with a run that failed on an outage (a lost race): the same run again, later. */
  async function handle(worker: BatchHandler, partition: number, messages: ConsumedMessage[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await worker({ topic: 'race.events', partition, messages });
      } catch (error) {
        if (!(error instanceof StepError && error.outage) || attempt >= 30) throw error;
        retries++;
        await sleep(5 + Math.random() * 20);
      }
    }
  }

  async function personOf(distinctId: string): Promise<{ uuid: string; properties: Record<string, unknown> } | undefined> {
    const [row] = await stores.db.query<{ uuid: string; properties: Record<string, unknown> }>(
      `SELECT p.uuid::text AS uuid, p.properties FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = $1 AND d.distinct_id = $2`,
      [TEAM, distinctId],
    );
    return row;
  }

  it.each([
    ['each event in its own run', false],
    ['every round in one run per worker', true],
  ])('ends every pair as one person, in PostgreSQL and in ClickHouse (%s)', async (_mode, oneRun) => {
    const runId = `${oneRun ? 'b' : 's'}${Date.now().toString(36)}`;
    const rounds = Array.from({ length: ROUNDS }, (_, r) =>
      SCENARIOS.map((scenario, s) => ({ scenario, id: (n: string) => `${runId}-${r}-${s}-${n}` })),
    ).flat();
    // Before the race: every round's history, one run.
    const history = rounds.flatMap(({ scenario, id }) => scenario.before(id).map(message));
    if (history.length > 0) await handle(workers[0]!, 0, history);

    // The race: worker 0 takes the first event of every round, worker 1 the second, both
    // starting together: all rounds in one run each, or one pair at a time.
    const sides = [rounds.map(({ scenario, id }) => message(scenario.first(id))), rounds.map(({ scenario, id }) => message(scenario.second(id)))];
    if (oneRun) await Promise.all(sides.map((messages, w) => handle(workers[w]!, w, messages)));
    else for (let i = 0; i < rounds.length; i++) await Promise.all(sides.map((messages, w) => handle(workers[w]!, w, [messages[i]!])));

    const problems: string[] = [];
    for (const { scenario, id } of rounds) {
      const persons = await Promise.all(scenario.together.map((n) => personOf(id(n))));
      const uuids = new Set(persons.map((p) => p?.uuid ?? 'none'));
      if (uuids.size !== 1 || uuids.has('none')) {
        problems.push(`${scenario.name} ${id('')}: persons ${[...uuids].join(', ')}`);
        continue;
      }
      const properties = persons[0]!.properties;
      for (const [key, value] of Object.entries(scenario.properties)) {
        if (properties[key] !== value) problems.push(`${scenario.name} ${id('')}: ${key} is ${JSON.stringify(properties[key])}, not ${JSON.stringify(value)}`);
      }
      // ClickHouse's copies say the same: each distinct id's newest row names that person, which is not deleted.
      for (const n of scenario.together) {
        const [copy] = await (
          await ch.query({
            query: `SELECT toString(argMax(person_id, version)) AS person_id FROM person_distinct_id2 WHERE team_id = {t:Int64} AND distinct_id = {d:String}`,
            query_params: { t: TEAM, d: id(n) },
            format: 'JSONEachRow',
          })
        ).json<{ person_id: string }>();
        if (copy?.person_id !== persons[0]!.uuid)
          problems.push(`${scenario.name} ${id(n)}: ClickHouse names ${copy?.person_id}, PostgreSQL ${persons[0]!.uuid}`);
      }
      const [person] = await (
        await ch.query({
          query: `SELECT argMax(is_deleted, version) AS deleted FROM person WHERE team_id = {t:Int64} AND id = {id:UUID}`,
          query_params: { t: TEAM, id: persons[0]!.uuid },
          format: 'JSONEachRow',
        })
      ).json<{ deleted: number }>();
      if (Number(person?.deleted) !== 0) problems.push(`${scenario.name} ${id('')}: ClickHouse has the surviving person deleted`);
    }
    // No person without a distinct id: a merge that moved the ids but left its person behind.
    const orphans = await stores.db.query<{ uuid: string }>(
      `SELECT p.uuid::text AS uuid FROM persons p WHERE p.team_id = $1 AND NOT EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.person_id = p.id)`,
      [TEAM],
    );
    for (const o of orphans) problems.push(`person ${o.uuid} has no distinct id`);
    for (const letter of deadLetters) problems.push(`dead-lettered: ${letter}`);
    console.log(`merge race (${_mode}): ${rounds.length} pairs, ${retries} runs retried after losing a race`);
    expect(problems).toEqual([]);
  });
});
