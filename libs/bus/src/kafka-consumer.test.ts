import { EventEmitter } from 'node:events';
import type { Kafka } from 'kafkajs';
import { silentLogger } from '@sightline/logger';
import { rejoinErrorOf, subscribeKafkaConsumer } from './kafka-consumer';

/** Just enough of a kafkajs consumer to see what the subscription does with it. */
class FakeConsumer extends EventEmitter {
  readonly events = { HEARTBEAT: 'heartbeat', CRASH: 'crash' };
  runs = 0;
  stopped = false;
  async connect() {}
  async subscribe() {}
  async run() {
    this.runs++;
  }
  async stop() {
    this.stopped = true;
  }
  async disconnect() {}
}

function fakeKafka(): { kafka: Kafka; consumers: FakeConsumer[] } {
  const consumers: FakeConsumer[] = [];
  const kafka = {
    consumer: () => {
      const c = new FakeConsumer();
      consumers.push(c);
      return c;
    },
  } as unknown as Kafka;
  return { kafka, consumers };
}

const crash = (consumer: FakeConsumer, restart: boolean) => consumer.emit('crash', { payload: { error: new Error('boom'), groupId: 'g', restart } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Kafka consumer subscription', () => {
  it('replaces a consumer that kafkajs stopped for good with a new member of the group', async () => {
    const { kafka, consumers } = fakeKafka();
    const sub = await subscribeKafkaConsumer(kafka, { groupId: 'g', topic: 't', handler: async () => undefined }, silentLogger(), () =>
      Promise.reject(new Error('no admin here')),
    );
    crash(consumers[0]!, false);
    await sleep(1000);
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
    await sleep(500);
    expect(consumers).toHaveLength(1);
    await sub.stop();
    crash(consumers[0]!, false);
    await sleep(500);
    expect(consumers).toHaveLength(1);
  });

  it('finds the rebalance answer under the error kafkajs wraps an explicit commit’s failure in', () => {
    const protocol = Object.assign(new Error('The group is rebalancing, so a rejoin is needed'), { type: 'REBALANCE_IN_PROGRESS' });
    const wrapped = new Error('The group is rebalancing, so a rejoin is needed', { cause: protocol });
    expect(rejoinErrorOf(wrapped)).toBe(protocol);
    expect(rejoinErrorOf(Object.assign(new Error('x'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' }))).toBeUndefined();
    expect(rejoinErrorOf('not an error')).toBeUndefined();
  });
});
