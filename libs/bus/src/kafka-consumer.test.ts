import { EventEmitter } from 'node:events';
import type { ConsumerConfig, Kafka } from 'kafkajs';
import { silentLogger } from '@sightline/logger';
import { rejoinErrorOf, subscribeKafkaConsumer, type ConsumerClientFactory } from './kafka-consumer';

/** Just enough of a kafkajs consumer to see what the subscription does with it. */
class FakeConsumer extends EventEmitter {
  readonly events = { HEARTBEAT: 'heartbeat', CRASH: 'crash', GROUP_JOIN: 'join' };
  runs = 0;
  stopped = false;
  /** kafkajs's stop() that never returns, as for a consumer stopped just after it joined. */
  stopHangs = false;
  running = true;
  eachBatch?: (payload: unknown) => Promise<void>;
  inBatch?: Promise<void>;
  readonly commits: unknown[] = [];
  async connect() {}
  async subscribe() {}
  async run(config: { eachBatch: (payload: unknown) => Promise<void> }) {
    this.runs++;
    this.eachBatch = config.eachBatch;
  }
  /** Hands the subscription a batch of one message, as kafkajs's fetch loop does. */
  deliver(offset: string): Promise<void> {
    this.inBatch = this.eachBatch!({
      batch: { topic: 't', partition: 0, messages: [{ key: null, value: Buffer.from('m'), headers: {}, offset }] },
      resolveOffset: () => undefined,
      heartbeat: async () => undefined,
      isRunning: () => this.running,
      isStale: () => false,
    });
    return this.inBatch;
  }
  async commitOffsets(offsets: unknown[]) {
    this.commits.push(...offsets);
  }
  async stop() {
    this.stopped = true;
    this.running = false;
    // kafkajs waits for the batch in hand before it stops.
    await this.inBatch;
    if (this.stopHangs) await new Promise(() => undefined);
  }
  async disconnect() {}
}

function fakeKafka(): {
  kafka: ConsumerClientFactory;
  consumers: FakeConsumer[];
  settings: { client: { requestTimeoutMs: number }; consumer: ConsumerConfig }[];
} {
  const consumers: FakeConsumer[] = [];
  const settings: { client: { requestTimeoutMs: number }; consumer: ConsumerConfig }[] = [];
  const kafka: ConsumerClientFactory = (client) =>
    ({
      consumer: (consumer: ConsumerConfig) => {
        settings.push({ client, consumer });
        const c = new FakeConsumer();
        consumers.push(c);
        return c;
      },
    }) as unknown as Kafka;
  return { kafka, consumers, settings };
}

const crash = (consumer: FakeConsumer, restart: boolean) => consumer.emit('crash', { payload: { error: new Error('boom'), groupId: 'g', restart } });

describe('Kafka consumer subscription', () => {
  // The subscription's waits (a crashed consumer's backoff, the bound on leaving the group) run on
  // jest's clock, moved on by the tests: what happens within a span does not depend on the load.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("waits for a group request's answer longer than the broker may hold it (the rebalance timeout)", async () => {
    // The worker's shortest session, the default one and a long one.
    for (const sessionTimeoutMs of [6_000, 30_000, 120_000]) {
      const { kafka, settings } = fakeKafka();
      const sub = await subscribeKafkaConsumer(kafka, { groupId: 'g', topic: 't', sessionTimeoutMs, handler: async () => undefined }, silentLogger(), () =>
        Promise.reject(new Error('no admin here')),
      );
      const [{ client, consumer }] = settings as [(typeof settings)[number]];
      expect(consumer.sessionTimeout).toBe(sessionTimeoutMs);
      expect(client.requestTimeoutMs).toBeGreaterThan(consumer.rebalanceTimeout!);
      expect(client.requestTimeoutMs).toBeGreaterThanOrEqual(30_000);
      await sub.stop();
    }
  });

  it('replaces a consumer that kafkajs stopped for good with a new member of the group', async () => {
    const { kafka, consumers } = fakeKafka();
    const sub = await subscribeKafkaConsumer(kafka, { groupId: 'g', topic: 't', handler: async () => undefined }, silentLogger(), () =>
      Promise.reject(new Error('no admin here')),
    );
    crash(consumers[0]!, false);
    await jest.advanceTimersByTimeAsync(1000);
    expect(consumers).toHaveLength(2);
    expect(consumers[1]!.runs).toBe(1);
    await sub.stop();
    expect(consumers[1]!.stopped).toBe(true);
  });

  it('leaves a crash that kafkajs restarts itself, and a stopped subscription, alone', async () => {
    const { kafka, consumers } = fakeKafka();
    const sub = await subscribeKafkaConsumer(kafka, { groupId: 'g', topic: 't', handler: async () => undefined }, silentLogger(), () =>
      Promise.reject(new Error('no admin here')),
    );
    crash(consumers[0]!, true);
    await jest.advanceTimersByTimeAsync(500);
    expect(consumers).toHaveLength(1);
    await sub.stop();
    crash(consumers[0]!, false);
    await jest.advanceTimersByTimeAsync(500);
    expect(consumers).toHaveLength(1);
  });

  it('stops within its bound when kafkajs never finishes leaving the group', async () => {
    const { kafka, consumers } = fakeKafka();
    const sub = await subscribeKafkaConsumer(kafka, { groupId: 'g', topic: 't', handler: async () => undefined }, silentLogger(), () =>
      Promise.reject(new Error('no admin here')),
    );
    consumers[0]!.stopHangs = true;
    const started = Date.now();
    let stopped = false;
    const stopping = sub.stop().then(() => void (stopped = true));
    while (!stopped && Date.now() - started < 60_000) await jest.advanceTimersByTimeAsync(100);
    await stopping;
    expect(consumers[0]!.stopped).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('writes and commits the chunk in hand before it stops, even when kafkajs never leaves', async () => {
    const { kafka, consumers } = fakeKafka();
    let release!: () => void;
    const handled: string[] = [];
    const sub = await subscribeKafkaConsumer(
      kafka,
      {
        groupId: 'g',
        topic: 't',
        handler: async ({ messages }) => {
          await new Promise<void>((resolve) => (release = resolve));
          handled.push(...messages.map((m) => m.offset));
        },
      },
      silentLogger(),
      () => Promise.reject(new Error('no admin here')),
    );
    const consumer = consumers[0]!;
    consumer.stopHangs = true;
    const batch = consumer.deliver('41');
    await jest.advanceTimersByTimeAsync(50);
    let stopped = false;
    const stopping = sub.stop().then(() => void (stopped = true));
    // Longer than the bound on leaving: the chunk in hand is not given up on.
    await jest.advanceTimersByTimeAsync(4_000);
    expect(stopped).toBe(false);
    release();
    await batch;
    // Then it waits its bound on leaving, as kafkajs never leaves.
    while (!stopped) await jest.advanceTimersByTimeAsync(100);
    await stopping;
    expect(handled).toEqual(['41']);
    expect(consumer.commits).toEqual([{ topic: 't', partition: 0, offset: '42' }]);
  }, 15_000);

  it('finds the rebalance answer under the error kafkajs wraps an explicit commit’s failure in', () => {
    const protocol = Object.assign(new Error('The group is rebalancing, so a rejoin is needed'), { type: 'REBALANCE_IN_PROGRESS' });
    const wrapped = new Error('The group is rebalancing, so a rejoin is needed', { cause: protocol });
    expect(rejoinErrorOf(wrapped)).toBe(protocol);
    expect(rejoinErrorOf(Object.assign(new Error('x'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' }))).toBeUndefined();
    expect(rejoinErrorOf('not an error')).toBeUndefined();
  });
});
