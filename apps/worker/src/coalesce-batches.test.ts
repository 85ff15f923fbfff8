import type { ConsumedBatch } from '@sightline/bus';
import { coalesceConcurrentBatches } from './events.consumer';

const batch = (partition: number): ConsumedBatch => ({ topic: 't', partition, messages: [] });

describe('coalesceConcurrentBatches', () => {
  it('starts runs at once while a slot is free and takes the batches that arrive meanwhile together', async () => {
    const runs: number[][] = [];
    const gates: (() => void)[] = [];
    const handler = coalesceConcurrentBatches(async (batches) => {
      runs.push(batches.map((b) => b.partition));
      await new Promise<void>((resolve) => gates.push(resolve));
    }, 2);
    const done = [0, 1, 2, 3, 4].map((p) => handler(batch(p)));
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([[0], [1]]);
    gates.shift()!();
    await done[0];
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([[0], [1], [2, 3, 4]]);
    for (const open of gates.splice(0)) open();
    await Promise.all(done);
  });

  it('rejects every batch of a failed run (so each partition retries) and keeps working after', async () => {
    let fail = true;
    const handler = coalesceConcurrentBatches(async () => {
      if (fail) throw new Error('store down');
    }, 1);
    await expect(handler(batch(0))).rejects.toThrow('store down');
    fail = false;
    await expect(handler(batch(0))).resolves.toBeUndefined();
  });
});
