import { createInProcessBus, topicNames, type BatchHandler, type ConsumedMessage } from '@sightline/bus';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { decodeIngestMessage, encodeIngestMessage, type IngestMessage, type RawEvent } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { findPersonByDistinctId, readPersonCopy } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { createEmbeddedTestStores, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createEventsConsumer } from './events.consumer';

/**
 * The embedded service's runs gathered (gatherRuns): runs of different partitions handled at
 * once share one persons transaction and one ClickHouse insert per table, and a run whose data
 * fails does not take the runs gathered with it down.
 */
const TOKEN = 'phc_gathered_runs_key';
const TEAM = 1;

describe('events consumer gathering runs (PGlite, ClickHouse)', () => {
  let stores: Pick<TestStores, 'db' | 'ch' | 'close'>;
  let db: MetadataStore;
  let ch: ClickHouseClient;
  let handler: BatchHandler;
  let metrics: Metrics;
  let offset = 0;
  const topics = topicNames('gathered.');
  const bus = createInProcessBus(silentLogger());
  /** The steps of the messages dead-lettered (the in-process bus answers a send once handled). */
  const deadLettered: string[] = [];

  beforeAll(async () => {
    stores = await createEmbeddedTestStores('gathered', { projectApiKey: TOKEN });
    ({ db, ch } = stores);
    await bus.subscribe({
      groupId: 'test',
      topic: topics.deadLetter,
      handler: async ({ messages }) => void deadLettered.push(...messages.map((m) => m.headers['x-step']!)),
    });
  });
  afterAll(async () => {
    await bus.close();
    await stores.close();
  });
  beforeEach(() => {
    metrics = createMetrics();
    handler = createEventsConsumer({
      ch,
      db,
      bus,
      topics,
      resolveTeam: async () => TEAM,
      metrics,
      logger: silentLogger(),
      gatherRuns: { maxEvents: 10_000 },
    });
  });

  const message = (raw: RawEvent): ConsumedMessage => {
    const { key, value } = busMessage(raw, { token: TOKEN, teamId: TEAM });
    return { key, value: Buffer.from(value), headers: {}, offset: String(offset++) };
  };
  const count = async (sql: string) => Number((await (await ch.query({ query: sql, format: 'JSONEachRow' })).json<{ c: string }>())[0]!.c);
  /** How many times a pipeline step ran (its duration histogram's count). */
  const stepRuns = async (step: string) => {
    const histogram = (await metrics.pipelineStepDuration.get()).values;
    return histogram.find((v) => v.metricName === 'worker_pipeline_step_duration_seconds_count' && v.labels['step'] === step)?.value ?? 0;
  };

  it('writes the runs of concurrent batches in one persons transaction and one insert', async () => {
    const batch = (partition: number) =>
      handler({
        topic: 'gathered.events',
        partition,
        messages: [0, 1, 2].map((n) => message({ event: `gathered-${partition}`, distinct_id: `g-${partition}-${n}`, properties: { $set: { p: partition } } })),
      });
    await Promise.all([batch(0), batch(1), batch(2)]);
    expect(await count("SELECT count() AS c FROM events WHERE event LIKE 'gathered-%'")).toBe(9);
    expect(await stepRuns('persons')).toBe(1);
    expect(await stepRuns('write')).toBe(1);
    // Each run's persons are stored, and copied to ClickHouse, as if it had run alone.
    for (const partition of [0, 1, 2]) {
      const person = await findPersonByDistinctId(db, TEAM, `g-${partition}-1`);
      expect(person?.properties).toEqual({ p: partition });
      expect((await readPersonCopy(ch, TEAM, person!.uuid))?.properties).toEqual({ p: partition });
    }
  });

  it('writes the runs gathered with one whose row ClickHouse rejects, and dead-letters only that row', async () => {
    const poison = message({ event: 'gathered-unwritable', distinct_id: 'gp-bad' });
    const raw = decodeIngestMessage(poison.value) as IngestMessage;
    raw.timestamp = '+010000-01-01T00:00:00.000Z'; // a valid JS date ClickHouse cannot store
    const poisoned = { ...poison, value: encodeIngestMessage(raw) };
    await Promise.all([
      handler({ topic: 'gathered.events', partition: 0, messages: [message({ event: 'gathered-good', distinct_id: 'gp-a' })] }),
      handler({ topic: 'gathered.events', partition: 1, messages: [message({ event: 'gathered-neighbour', distinct_id: 'gp-bad' }), poisoned] }),
      handler({ topic: 'gathered.events', partition: 2, messages: [message({ event: 'gathered-good', distinct_id: 'gp-b' })] }),
    ]);
    expect(await count("SELECT count() AS c FROM events WHERE event = 'gathered-good'")).toBe(2);
    expect(await count("SELECT count() AS c FROM events WHERE event = 'gathered-neighbour'")).toBe(1);
    expect(await count("SELECT count() AS c FROM events WHERE event = 'gathered-unwritable'")).toBe(0);
    expect(deadLettered).toEqual(['write']);
  });

  it('with gatherWrites, runs started together keep their own persons transactions and share one insert', async () => {
    const writesGathered = createEventsConsumer({
      ch,
      db,
      bus,
      topics,
      resolveTeam: async () => TEAM,
      metrics,
      logger: silentLogger(),
      // No hold deadline in the test: a loaded machine must not split the insert.
      gatherWrites: { maxEvents: 10_000, maxHoldMs: 60_000 },
    });
    const batch = (partition: number) =>
      writesGathered({
        topic: 'gathered.events',
        partition,
        messages: [0, 1].map((n) =>
          message({ event: `write-gathered-${partition}`, distinct_id: `wg-${partition}-${n}`, properties: { $set: { w: partition } } }),
        ),
      });
    await Promise.all([batch(0), batch(1), batch(2)]);
    expect(await count("SELECT count() AS c FROM events WHERE event LIKE 'write-gathered-%'")).toBe(6);
    expect(await stepRuns('persons')).toBe(3);
    expect(await stepRuns('write')).toBe(1);
    const person = await findPersonByDistinctId(db, TEAM, 'wg-2-1');
    expect((await readPersonCopy(ch, TEAM, person!.uuid))?.properties).toEqual({ w: 2 });
  });
});
