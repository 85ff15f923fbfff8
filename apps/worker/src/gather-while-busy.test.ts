import { gatherWhileBusy } from './gather-while-busy';

class DataError extends Error {}

/** A gatherer over arrays of numbers whose executions wait until the test opens them. */
function recorded(options: { maxSize?: number; failOn?: number } = {}) {
  const executions: number[][][] = [];
  const gates: (() => void)[] = [];
  const submit = gatherWhileBusy<number[], number>({
    execute: async (inputs) => {
      executions.push(inputs.map((i) => [...i]));
      await new Promise<void>((resolve) => gates.push(resolve));
      if (options.failOn !== undefined && inputs.some((i) => i.includes(options.failOn!))) throw new DataError(`bad ${options.failOn}`);
      return inputs.map((i) => i.reduce((a, b) => a + b, 0));
    },
    sizeOf: (input) => input.length,
    maxSize: options.maxSize ?? 100,
    retryAlone: (error) => error instanceof DataError,
  });
  const openAll = async () => {
    // Each opened execution may start the next: open until none is left waiting.
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setImmediate(r));
      for (const open of gates.splice(0)) open();
    }
  };
  return { submit, executions, openAll };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('gatherWhileBusy', () => {
  it('takes inputs submitted in one tick together, and those submitted during an execution into the next', async () => {
    const { submit, executions, openAll } = recorded();
    const first = [submit([1]), submit([2, 3])];
    await tick();
    await tick();
    const later = [submit([4]), submit([5]), submit([6])];
    await tick();
    expect(executions).toEqual([[[1], [2, 3]]]);
    await openAll();
    expect(await Promise.all([...first, ...later])).toEqual([1, 5, 4, 5, 6]);
    expect(executions).toEqual([
      [[1], [2, 3]],
      [[4], [5], [6]],
    ]);
  });

  it('takes no more than maxSize together, but always at least one input', async () => {
    const { submit, executions, openAll } = recorded({ maxSize: 3 });
    const all = [submit([1, 1, 1, 1]), submit([2]), submit([3, 3]), submit([4])];
    await openAll();
    await Promise.all(all);
    expect(executions).toEqual([[[1, 1, 1, 1]], [[2], [3, 3]], [[4]]]);
  });

  it('runs each input again alone after a data error, so only the bad one fails', async () => {
    const { submit, executions, openAll } = recorded({ failOn: 13 });
    const results = [submit([1]), submit([13]), submit([2])].map((p) =>
      p.then(
        (v) => ({ v }),
        (e: Error) => ({ e: e.message }),
      ),
    );
    await openAll();
    expect(await Promise.all(results)).toEqual([{ v: 1 }, { e: 'bad 13' }, { v: 2 }]);
    expect(executions).toEqual([[[1], [13], [2]], [[1]], [[13]], [[2]]]);
  });

  it('fails every input of an execution that failed for another reason, and keeps working after', async () => {
    let down = true;
    const submit = gatherWhileBusy<number, number>({
      execute: async (inputs) => {
        if (down) throw new Error('store down');
        return [...inputs];
      },
      sizeOf: () => 1,
      maxSize: 10,
      retryAlone: (error) => error instanceof DataError,
    });
    const failed = [submit(1), submit(2)].map((p) => p.catch((e: Error) => e.message));
    expect(await Promise.all(failed)).toEqual(['store down', 'store down']);
    down = false;
    expect(await Promise.all([submit(3), submit(4)])).toEqual([3, 4]);
  });

  describe('holdWhile', () => {
    const gatherer = (hold: () => boolean, options: { maxSize?: number; maxHoldMs?: number } = {}) => {
      const executions: number[][] = [];
      const submit = gatherWhileBusy<number, number>({
        execute: async (inputs) => {
          executions.push([...inputs]);
          return [...inputs];
        },
        sizeOf: () => 1,
        maxSize: options.maxSize ?? 10,
        retryAlone: () => false,
        holdWhile: hold,
        maxHoldMs: options.maxHoldMs ?? 60_000,
      });
      return { submit, executions };
    };

    it('holds inputs while more are on their way, and takes them together once woken', async () => {
      let onTheirWay = 2;
      const { submit, executions } = gatherer(() => onTheirWay > 0);
      const first = submit(1);
      await tick();
      await tick();
      expect(executions).toEqual([]);
      onTheirWay = 1;
      const second = submit(2);
      submit.wake();
      await tick();
      expect(executions).toEqual([]);
      onTheirWay = 0;
      const third = submit(3);
      submit.wake();
      expect(await Promise.all([first, second, third])).toEqual([1, 2, 3]);
      expect(executions).toEqual([[1, 2, 3]]);
    });

    it('stops holding once maxSize inputs wait', async () => {
      const { submit, executions } = gatherer(() => true, { maxSize: 2 });
      const all = [submit(1), submit(2)];
      expect(await Promise.all(all)).toEqual([1, 2]);
      expect(executions).toEqual([[1, 2]]);
    });

    it('holds an input no longer than maxHoldMs', async () => {
      const { submit, executions } = gatherer(() => true, { maxHoldMs: 20 });
      const startedAt = Date.now();
      expect(await submit(7)).toBe(7);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(15);
      expect(executions).toEqual([[7]]);
    });
  });
});
