/** Submits an input; resolves to its own share of the output of the execution that took it. */
export type Gathered<In, Out> = ((input: In) => Promise<Out>) & {
  /** Tells the gatherer that `holdWhile` may have turned false: held inputs start if so. */
  wake(): void;
};

export interface GatherOptions<In, Out> {
  /** Runs inputs together; returns one output per input, in their order. */
  execute: (inputs: readonly In[]) => Promise<Out[]>;
  /** An input's size (events); an execution takes inputs up to `maxSize` together (at least one). */
  sizeOf: (input: In) => number;
  maxSize: number;
  /**
   * Whether a failure of inputs run together is theirs to find out one by one (a data error):
   * each input of the failed execution then runs again alone, in order, so one input's bad
   * data does not fail the others. Otherwise (an outage) every input of the execution fails.
   */
  retryAlone: (error: unknown) => boolean;
  /**
   * While true, waiting inputs are held for more to come (inputs known to be on their way),
   * unless they reach `maxSize` or the oldest has waited `maxHoldMs`; call `wake()` once it may
   * have turned false. Absent: never held.
   */
  holdWhile?: () => boolean;
  /** The longest an input is held by `holdWhile` (default 250 ms). */
  maxHoldMs?: number;
}

/**
 * One execution at a time; inputs submitted while one runs wait and go together into the next
 * (group commit). No timer: an input submitted while nothing runs starts once the event loop
 * has run what is already due (setImmediate), so the runs one bus send woke (one per partition)
 * start together, and gathering delays an input by at most the execution ahead of it, which it
 * would have queued behind anyway on a store that runs one transaction or insert at a time.
 */
export function gatherWhileBusy<In, Out>(options: GatherOptions<In, Out>): Gathered<In, Out> {
  interface Waiting {
    input: In;
    resolve: (output: Out) => void;
    reject: (error: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let running = false;

  const takeNext = (): Waiting[] => {
    let size = 0;
    let n = 0;
    while (n < waiting.length && (n === 0 || size + options.sizeOf(waiting[n]!.input) <= options.maxSize)) {
      size += options.sizeOf(waiting[n]!.input);
      n++;
    }
    const taken = waiting.slice(0, n);
    waiting = waiting.slice(n);
    return taken;
  };

  const settle = async (taken: readonly Waiting[]): Promise<void> => {
    try {
      const outputs = await options.execute(taken.map((t) => t.input));
      taken.forEach((t, i) => t.resolve(outputs[i]!));
    } catch (error) {
      if (taken.length === 1 || !options.retryAlone(error)) {
        for (const t of taken) t.reject(error);
        return;
      }
      for (const t of taken) await settle([t]);
    }
  };

  const waitingSize = () => {
    let size = 0;
    for (const w of waiting) size += options.sizeOf(w.input);
    return size;
  };
  /** Since when the oldest waiting input is held, and the timer that ends its hold. */
  let heldSince = 0;
  let holdTimer: NodeJS.Timeout | undefined;
  const maxHoldMs = options.maxHoldMs ?? 250;
  const held = (): boolean => {
    if (!options.holdWhile?.() || waitingSize() >= options.maxSize) return false;
    if (heldSince === 0) heldSince = Date.now();
    const left = heldSince + maxHoldMs - Date.now();
    if (left <= 0) return false;
    holdTimer ??= setTimeout(() => {
      holdTimer = undefined;
      wake();
    }, left).unref();
    return true;
  };

  const drain = async () => {
    while (waiting.length > 0 && !held()) {
      heldSince = 0;
      await settle(takeNext());
    }
    running = false;
  };

  const start = () => {
    if (running || waiting.length === 0) return;
    running = true;
    setImmediate(() => void drain());
  };
  const wake = () => start();

  const submit = (input: In) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      start();
    });
  return Object.assign(submit, { wake });
}
