import { silentLogger } from '@sightline/logger';
import type { ConsumedBatch } from './event-bus';
import { createInProcessBus } from './in-process-bus';

/** One turn of the event loop: every promise callback queued so far has run by then. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('in-process bus', () => {
  it('resolves send only after the consumer handled the message', async () => {
    const bus = createInProcessBus(silentLogger());
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    await bus.subscribe({
      groupId: 'g',
      topic: 't',
      handler: async (batch) => {
        entered();
        await gate;
        order.push(`handled ${batch.messages.length}`);
      },
    });
    const sent = bus.send('t', [{ key: 'k', value: 'v' }]).then(() => order.push('send resolved'));
    await inHandler;
    await nextTurn();
    expect(order).toEqual([]);
    release();
    await sent;
    expect(order).toEqual(['handled 1', 'send resolved']);
    await bus.close();
  });

  it('gathers concurrent sends into one batch, in order', async () => {
    const bus = createInProcessBus(silentLogger());
    const batches: ConsumedBatch[] = [];
    const sends = Array.from({ length: 50 }, (_, i) => bus.send('t', [{ key: 'k', value: String(i) }]));
    await bus.subscribe({ groupId: 'g', topic: 't', handler: async (b) => void batches.push(b) });
    await Promise.all(sends);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.messages.map((m) => m.value.toString())).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
    await bus.close();
  });

  it("hands over the sender's decoded object as it is, and reads the value only when the consumer does", async () => {
    const bus = createInProcessBus(silentLogger());
    const decoded = { event: 'e', n: 1 };
    let valueReads = 0;
    const lazy = {
      key: 'k',
      decoded,
      get value() {
        valueReads++;
        return JSON.stringify(decoded);
      },
    };
    const batches: ConsumedBatch[] = [];
    await bus.subscribe({ groupId: 'g', topic: 't', handler: async (b) => void batches.push(b) });
    await bus.send('t', [lazy, { key: 'k', value: Buffer.from('plain'), headers: { h: '1' } }]);
    const [withObject, plain] = batches.flatMap((b) => b.messages);
    expect(withObject!.decoded).toBe(decoded);
    expect(valueReads).toBe(0);
    expect(JSON.parse(withObject!.value.toString())).toEqual(decoded);
    expect(withObject!.value.toString()).toBe('{"event":"e","n":1}');
    expect(valueReads).toBe(1);
    expect(plain).toMatchObject({ key: 'k', headers: { h: '1' }, decoded: undefined });
    expect(plain!.value.toString()).toBe('plain');
    await bus.close();
  });

  it('retries a failing batch and never loses it', async () => {
    const bus = createInProcessBus(silentLogger());
    let calls = 0;
    const seen: string[] = [];
    await bus.subscribe({
      groupId: 'g',
      topic: 't',
      handler: async (b) => {
        calls++;
        if (calls < 3) throw new Error('store down');
        seen.push(...b.messages.map((m) => m.value.toString()));
      },
    });
    await bus.send('t', [
      { key: 'k', value: 'a' },
      { key: 'k', value: 'b' },
    ]);
    expect(calls).toBe(3);
    expect(seen).toEqual(['a', 'b']);
    await bus.close();
  });

  it('keeps each key in one partition, in order, and handles `concurrency` partitions at once', async () => {
    const bus = createInProcessBus(silentLogger(), { partitions: 2 });
    const seen = new Map<string, string[]>();
    const partitionsOfKey = new Map<string, Set<number>>();
    let inHandler = 0;
    let mostAtOnce = 0;
    await bus.subscribe({
      groupId: 'g',
      topic: 't',
      concurrency: 2,
      handler: async (b) => {
        mostAtOnce = Math.max(mostAtOnce, ++inHandler);
        // Held across a turn of the event loop, so another partition's batch may come in meanwhile.
        await nextTurn();
        for (const m of b.messages) {
          seen.set(m.key!, [...(seen.get(m.key!) ?? []), m.value.toString()]);
          partitionsOfKey.set(m.key!, (partitionsOfKey.get(m.key!) ?? new Set()).add(b.partition));
        }
        inHandler--;
      },
    });
    const keys = Array.from({ length: 20 }, (_, i) => `user-${i}`);
    await Promise.all(
      Array.from({ length: 10 }, (_, round) =>
        bus.send(
          't',
          keys.map((key) => ({ key, value: String(round) })),
        ),
      ),
    );
    for (const key of keys) {
      expect(seen.get(key)).toEqual(Array.from({ length: 10 }, (_, round) => String(round)));
      expect(partitionsOfKey.get(key)!.size).toBe(1);
    }
    // Both partitions were used, and were in the handler together.
    expect(new Set(keys.map((key) => [...partitionsOfKey.get(key)!][0])).size).toBe(2);
    expect(mostAtOnce).toBe(2);
    await bus.close();
  });

  it('handles one partition at a time with concurrency 1', async () => {
    const bus = createInProcessBus(silentLogger(), { partitions: 2 });
    let inHandler = 0;
    let mostAtOnce = 0;
    let handled = 0;
    await bus.subscribe({
      groupId: 'g',
      topic: 't',
      handler: async (b) => {
        mostAtOnce = Math.max(mostAtOnce, ++inHandler);
        // Held across a turn of the event loop, so another partition's batch may come in meanwhile.
        await nextTurn();
        handled += b.messages.length;
        inHandler--;
      },
    });
    await Promise.all(
      Array.from({ length: 5 }, (_, round) =>
        bus.send(
          't',
          Array.from({ length: 20 }, (_, i) => ({ key: `user-${i}`, value: String(round) })),
        ),
      ),
    );
    expect(handled).toBe(100);
    expect(mostAtOnce).toBe(1);
    await bus.close();
  });

  it('rejects pending sends on close instead of hanging', async () => {
    const bus = createInProcessBus(silentLogger());
    const pending = bus.send('nobody-listens', [{ key: 'k', value: 'v' }]);
    await bus.close();
    await expect(pending).rejects.toThrow(/closed/);
    await expect(bus.send('t', [{ key: 'k', value: 'v' }])).rejects.toThrow(/closed/);
  });
});
