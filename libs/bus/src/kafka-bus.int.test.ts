import { silentLogger } from '@sightline/logger';
import { pauseKafka, resumeKafka, testServices, uniqueName, waitFor } from '@sightline/testkit';
import type { ConsumedMessage, EventBus } from './event-bus';
import { createKafkaBus } from './kafka-bus';

describe('Kafka bus (librdkafka mock cluster, 3 brokers)', () => {
  const buses: EventBus[] = [];
  const bus = (sendTimeoutMs = 5000) => {
    const b = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('test'), sendTimeoutMs }, silentLogger());
    buses.push(b);
    return b;
  };
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
  });

  it('delivers to a consumer group, keeping key order', async () => {
    const topic = uniqueName('order');
    const producer = bus();
    const messages = Array.from({ length: 200 }, (_, i) => ({ key: `k${i % 5}`, value: JSON.stringify({ key: `k${i % 5}`, i }) }));
    await producer.send(topic, messages);
    const received: ConsumedMessage[] = [];
    const sub = await bus().subscribe({ groupId: uniqueName('g'), topic, handler: async (b) => void received.push(...b.messages) });
    await waitFor(() => received.length >= 200, { timeoutMs: 60_000 });
    const perKey = new Map<string, number[]>();
    for (const m of received) {
      const v = JSON.parse(m.value.toString()) as { key: string; i: number };
      perKey.set(v.key, [...(perKey.get(v.key) ?? []), v.i]);
    }
    for (const list of perKey.values()) expect(list).toEqual([...list].sort((a, b) => a - b));
    await sub.stop();
  });

  it("carries each message's key, value and headers as sent", async () => {
    const topic = uniqueName('fields');
    const messages = Array.from({ length: 30 }, (_, i) => ({
      key: `k${i}`,
      value: Buffer.from(`v${i}`),
      ...(i % 2 === 0 ? { headers: { 'x-step': `step-${i}`, 'x-error': 'e' } } : {}),
    }));
    await bus().send(topic, messages);
    const received: ConsumedMessage[] = [];
    const sub = await bus().subscribe({ groupId: uniqueName('g'), topic, handler: async (b) => void received.push(...b.messages) });
    await waitFor(() => received.length >= 30, { timeoutMs: 60_000 });
    const seen = received
      .map((m) => ({ key: m.key, value: m.value.toString(), step: m.headers['x-step'] ?? null }))
      .sort((a, b) => Number(a.key!.slice(1)) - Number(b.key!.slice(1)));
    expect(seen).toEqual(messages.map((m, i) => ({ key: m.key, value: `v${i}`, step: i % 2 === 0 ? `step-${i}` : null })));
    await sub.stop();
  });

  it('gathers concurrent sends and splits a send larger than one produce request, keeping key order', async () => {
    const topic = uniqueName('batched');
    const producer = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('test'), maxRequestBytes: 2000 }, silentLogger());
    buses.push(producer);
    const big = Array.from({ length: 60 }, (_, i) => ({ key: 'big', value: JSON.stringify({ key: 'big', i, pad: 'x'.repeat(100) }) }));
    const small = Array.from({ length: 40 }, (_, i) => [{ key: `s${i % 4}`, value: JSON.stringify({ key: `s${i % 4}`, i }) }]);
    await Promise.all([producer.send(topic, big), ...small.map((m) => producer.send(topic, m))]);
    const received: ConsumedMessage[] = [];
    const sub = await bus().subscribe({ groupId: uniqueName('g'), topic, handler: async (b) => void received.push(...b.messages) });
    await waitFor(() => received.length >= 100, { timeoutMs: 60_000 });
    const perKey = new Map<string, number[]>();
    for (const m of received) {
      const v = JSON.parse(m.value.toString()) as { key: string; i: number };
      perKey.set(v.key, [...(perKey.get(v.key) ?? []), v.i]);
    }
    expect(perKey.get('big')).toEqual(big.map((_, i) => i));
    for (const [key, list] of perKey) if (key !== 'big') expect(list).toEqual([...list].sort((a, b) => a - b));
    expect(received).toHaveLength(100);
    await sub.stop();
  });

  it('redelivers a batch whose handler failed, and commits only after success', async () => {
    const topic = uniqueName('retry');
    const groupId = uniqueName('g');
    await bus().send(topic, [{ key: 'a', value: 'one' }]);
    let failures = 0;
    const seen: string[] = [];
    // A short session: the second member's join below waits out the first member's session
    // on the mock broker (seen: 33 s with the 30 s default, 9 s with this).
    const sub = await bus().subscribe({
      groupId,
      topic,
      sessionTimeoutMs: 6000,
      handler: async (b) => {
        if (failures < 2) {
          failures++;
          throw new Error('store down');
        }
        seen.push(...b.messages.map((m) => m.value.toString()));
      },
    });
    await waitFor(() => seen.length === 1, { timeoutMs: 60_000 });
    expect(failures).toBe(2);
    await sub.stop();
    // Committed: a new consumer in the same group does not see it again.
    await bus().send(topic, [{ key: 'a', value: 'two' }]);
    const after: string[] = [];
    const sub2 = await bus().subscribe({
      groupId,
      topic,
      sessionTimeoutMs: 6000,
      handler: async (b) => void after.push(...b.messages.map((m) => m.value.toString())),
    });
    await waitFor(() => after.length >= 1, { timeoutMs: 60_000 });
    expect(after).toEqual(['two']);
    await sub2.stop();
  });

  it('fails a send within its bound while the brokers are down, and recovers without a restart', async () => {
    const topic = uniqueName('outage');
    const producer = bus(1500);
    await producer.send(topic, [{ key: 'a', value: 'before' }]);
    pauseKafka();
    try {
      const started = Date.now();
      await expect(producer.send(topic, [{ key: 'a', value: 'during' }])).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      resumeKafka();
    }
    await waitFor(
      async () => {
        try {
          await producer.send(topic, [{ key: 'a', value: 'after' }]);
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 60_000 },
    );
  });
});
