import type { BusMessage } from './event-bus';
import { createProduceQueue, takeRequest, type QueuedSend } from './produce-queue';

const message = (key: string, bytes: number): BusMessage => ({ key, value: 'x'.repeat(bytes - key.length) });
const queued = (topic: string, messages: BusMessage[], state: Partial<QueuedSend> = {}): QueuedSend => ({
  topic,
  messages,
  taken: 0,
  cancelled: false,
  failed: false,
  resolve: () => undefined,
  reject: () => undefined,
  ...state,
});
const shape = (parts: ReturnType<typeof takeRequest>) => parts.map((p) => [p.entry.topic, p.from, p.to]);

describe('takeRequest', () => {
  it('gathers whole sends, in queue order, while they fit', () => {
    const queue = [queued('a', [message('k1', 100), message('k2', 100)]), queued('b', [message('k3', 100)]), queued('c', [message('k4', 100)])];
    expect(shape(takeRequest(queue, 300))).toEqual([
      ['a', 0, 2],
      ['b', 0, 1],
    ]);
    expect(queue.map((q) => q.topic)).toEqual(['c']);
  });

  it('splits a send that does not fit; its rest leads the next request, in order', () => {
    const big = queued('a', [message('k1', 100), message('k2', 100), message('k3', 100)]);
    const queue = [big, queued('b', [message('k4', 50)])];
    expect(shape(takeRequest(queue, 250))).toEqual([['a', 0, 2]]);
    expect(big.taken).toBe(2);
    expect(shape(takeRequest(queue, 250))).toEqual([
      ['a', 2, 3],
      ['b', 0, 1],
    ]);
    expect(queue).toEqual([]);
  });

  it('takes one message larger than the limit alone rather than never', () => {
    const queue = [queued('a', [message('k1', 1_000)]), queued('b', [message('k2', 10)])];
    expect(shape(takeRequest(queue, 100))).toEqual([['a', 0, 1]]);
    expect(shape(takeRequest(queue, 100))).toEqual([['b', 0, 1]]);
  });

  it('drops cancelled and failed sends at the front without sending them', () => {
    const queue = [
      queued('gone', [message('k1', 10)], { cancelled: true }),
      queued('broken', [message('k2', 10)], { failed: true }),
      queued('ok', [message('k3', 10)]),
    ];
    expect(shape(takeRequest(queue, 100))).toEqual([['ok', 0, 1]]);
    expect(takeRequest(queue, 100)).toEqual([]);
  });
});

describe('createProduceQueue', () => {
  it('gathers concurrent sends into one request and settles each once acknowledged', async () => {
    const requests: { topic: string; keys: string[] }[][] = [];
    const queue = createProduceQueue({
      maxRequestBytes: 10_000,
      lingerMs: 5,
      sendTimeoutMs: 5_000,
      produce: async (topicMessages) => void requests.push(topicMessages.map((t) => ({ topic: t.topic, keys: t.messages.map((m) => m.key) }))),
      onProduceFailed: () => undefined,
    });
    await Promise.all([queue.send('events', [message('a', 10)]), queue.send('events', [message('b', 10)]), queue.send('dlq', [message('c', 10)])]);
    expect(requests).toEqual([
      [
        { topic: 'events', keys: ['a', 'b'] },
        { topic: 'dlq', keys: ['c'] },
      ],
    ]);
    await queue.close();
    await expect(queue.send('events', [message('d', 10)])).rejects.toThrow('kafka bus closed');
  });

  it('fails every send of a request the broker did not acknowledge, and reports it', async () => {
    const failures: number[] = [];
    const queue = createProduceQueue({
      maxRequestBytes: 10_000,
      lingerMs: 0,
      sendTimeoutMs: 5_000,
      produce: async () => {
        throw new Error('broker down');
      },
      onProduceFailed: (_error, messages) => void failures.push(messages),
    });
    await expect(queue.send('events', [message('a', 10), message('b', 10)])).rejects.toThrow('broker down');
    expect(failures).toEqual([2]);
  });
});
