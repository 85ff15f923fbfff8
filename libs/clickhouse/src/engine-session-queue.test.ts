import { createEngineSessionQueue, DRAINED_MARKER, EngineSessionUnusableError } from './engine-session-queue';

const deferred = <T>() => {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

describe('the embedded engine session queue', () => {
  it('runs one statement at a time, in the order they came', async () => {
    const order: string[] = [];
    const queue = createEngineSessionQueue(async () => `${DRAINED_MARKER}\n`);
    const first = deferred<string>();
    const a = queue.run(async () => {
      order.push('a starts');
      const value = await first.promise;
      order.push('a ends');
      return value;
    });
    const b = queue.run(async () => {
      order.push('b runs');
      return 'b';
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a starts']);
    first.resolve('a');
    await expect(Promise.all([a, b])).resolves.toEqual(['a', 'b']);
    expect(order).toEqual(['a starts', 'a ends', 'b runs']);
  });

  it('reads out the leftovers after a failed statement, before the next statement runs, and passes the failure on', async () => {
    const order: string[] = [];
    const queue = createEngineSessionQueue(async () => {
      order.push('drain');
      return `[0]\n[1]\n${DRAINED_MARKER}\n`;
    });
    const failed = queue.run(async () => {
      order.push('fails');
      throw new Error('limit');
    });
    const next = queue.run(async () => {
      order.push('next');
      return 1;
    });
    await expect(failed).rejects.toThrow('limit');
    await expect(next).resolves.toBe(1);
    expect(order).toEqual(['fails', 'drain', 'next']);
    // A statement that succeeds is not followed by a read-out.
    await queue.run(async () => order.push('ok'));
    await queue.run(async () => order.push('ok again'));
    expect(order.filter((step) => step === 'drain')).toHaveLength(1);
  });

  it.each([
    ['keeps failing', () => Promise.reject(new Error('engine gone'))],
    ['does not end with its marker', () => Promise.resolve('[0]\n[1]\n')],
  ])('refuses every later statement when the read-out %s', async (_case, drain) => {
    const queue = createEngineSessionQueue(drain);
    await expect(queue.run(() => Promise.reject(new Error('limit')))).rejects.toThrow('limit');
    const never = jest.fn(async () => 1);
    await expect(queue.run(never)).rejects.toBeInstanceOf(EngineSessionUnusableError);
    expect(never).not.toHaveBeenCalled();
  });

  it('recovers when the read-out fails once and then succeeds', async () => {
    let calls = 0;
    const queue = createEngineSessionQueue(async () => {
      if (calls++ === 0) throw new Error('busy');
      return DRAINED_MARKER;
    });
    await expect(queue.run(() => Promise.reject(new Error('limit')))).rejects.toThrow('limit');
    await expect(queue.run(async () => 'fine')).resolves.toBe('fine');
    expect(calls).toBe(2);
  });
});
