/**
 * At most `concurrency` analytics reads in the engine at once; the others wait their turn, in
 * the order they came, for at most `maxWaitMs`.
 *
 * Why, in embedded mode: chdb runs each query on a thread of libuv's pool (4 threads), the same
 * pool the worker's inserts run on, and capture answers only once its insert is done. A few
 * heavy reads at once take every pool thread, and the inserts queue behind them for seconds.
 * One read at a time leaves threads, and a core, to the inserts. PostHog bounds API queries the same way: a few
 * at once per organisation, a query waiting up to 30 s for a slot and refused after
 * (posthog/clickhouse/client/limit.py, get_api_personal_rate_limiter).
 */
export interface ReadGate {
  /** Waits for a slot; resolves to its release (call it once), or rejects with ReadGateBusyError after maxWaitMs. */
  acquire(): Promise<() => void>;
  /** Reads running, and waiting. */
  readonly running: number;
  readonly waiting: number;
}

/** A read that waited `maxWaitMs` without a slot: the engine is busy with other requests' reads. */
export class ReadGateBusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`The analytics engine is busy with other queries; none could start within ${retryAfterSeconds} s. Try again shortly.`);
    this.name = 'ReadGateBusyError';
  }
}

export function createReadGate(options: { concurrency: number; maxWaitMs: number }): ReadGate {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  let running = 0;
  const queue: { grant: () => void; timer: NodeJS.Timeout }[] = [];

  const releaseOnce = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = queue.shift();
      if (next) {
        clearTimeout(next.timer);
        next.grant();
      } else running--;
    };
  };

  return {
    acquire() {
      if (running < concurrency && queue.length === 0) {
        running++;
        return Promise.resolve(releaseOnce());
      }
      return new Promise((resolve, reject) => {
        const waiter = {
          // A released slot passes straight to the next waiter: `running` stays as it is.
          grant: () => resolve(releaseOnce()),
          timer: setTimeout(() => {
            queue.splice(queue.indexOf(waiter), 1);
            reject(new ReadGateBusyError(Math.max(1, Math.ceil(options.maxWaitMs / 1000))));
          }, options.maxWaitMs),
        };
        queue.push(waiter);
      });
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
