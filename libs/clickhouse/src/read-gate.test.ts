import { createReadGate, ReadGateBusyError } from './read-gate';

describe('read gate', () => {
  it('lets `concurrency` reads run at once and the others in the order they came', async () => {
    const gate = createReadGate({ concurrency: 2, maxWaitMs: 10_000 });
    const started: number[] = [];
    const releases = new Map<number, () => void>();
    const reads = [1, 2, 3, 4].map((i) =>
      gate.acquire().then((release) => {
        started.push(i);
        releases.set(i, release);
      }),
    );
    await Promise.all(reads.slice(0, 2));
    expect(started).toEqual([1, 2]);
    expect([gate.running, gate.waiting]).toEqual([2, 2]);
    releases.get(2)!();
    await reads[2];
    expect(started).toEqual([1, 2, 3]);
    // A release called twice frees one slot, not two.
    releases.get(2)!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2, 3]);
    releases.get(1)!();
    await reads[3];
    expect(started).toEqual([1, 2, 3, 4]);
    releases.get(3)!();
    releases.get(4)!();
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });

  it('refuses a read that waited maxWaitMs, and keeps the turn of those behind it', async () => {
    jest.useFakeTimers();
    try {
      const gate = createReadGate({ concurrency: 1, maxWaitMs: 30_000 });
      const release = await gate.acquire();
      const late = gate.acquire();
      jest.advanceTimersByTime(20_000);
      const next = gate.acquire();
      jest.advanceTimersByTime(10_000);
      await expect(late).rejects.toThrow(ReadGateBusyError);
      await expect(late).rejects.toMatchObject({ retryAfterSeconds: 30 });
      expect(gate.waiting).toBe(1);
      release();
      const nextRelease = await next;
      expect(gate.running).toBe(1);
      nextRelease();
      expect(gate.running).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
