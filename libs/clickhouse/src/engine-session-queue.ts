/**
 * One queue for every statement on an in-process chdb session, which reads out what a failed
 * statement left behind before anything else runs.
 *
 * chdb 3.4 keeps the output a statement had already produced when it failed (a UNION whose
 * second branch throws, a result, row or time limit hit mid-stream) and hands it out in front of
 * the next statement's answer. In a process that serves several projects, the next statement
 * may be another project's read, so one project's rows would reach another's answer. The
 * engine runs one statement at a time in any case; queueing them here costs no parallelism, and
 * lets the queue run its own statement right after a failure, which takes the leftovers with it.
 */
export interface EngineSessionQueue {
  /** Runs `statement` once every statement queued before it has finished (and its leftovers were read out). */
  run<T>(statement: () => Promise<T>): Promise<T>;
  /** Resolves once every queued statement has finished. */
  idle(): Promise<void>;
}

/** The text the read-out statement answers, last, after any leftovers. */
export const DRAINED_MARKER = 'sightline:engine-drained';
/** The read-out statement, as TabSeparated: the marker alone on its line. */
export const DRAIN_SQL = `SELECT '${DRAINED_MARKER}'`;

export class EngineSessionUnusableError extends Error {
  constructor(cause: unknown) {
    super(
      `the embedded analytics engine could not be cleared after a failed statement; it answers nothing more: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'EngineSessionUnusableError';
  }
}

/** Read-out attempts after a failure before the session is given up on. */
const DRAIN_ATTEMPTS = 2;

/**
 * `drain` runs DRAIN_SQL on the session and answers its output as text. If the read-out itself
 * keeps failing, leftovers may still be waiting, so every later statement is refused
 * (EngineSessionUnusableError) rather than risk handing them to someone.
 */
export function createEngineSessionQueue(drain: () => Promise<string>): EngineSessionQueue {
  let tail: Promise<unknown> = Promise.resolve();
  let unusable: EngineSessionUnusableError | null = null;

  const readOutLeftovers = async () => {
    let lastError: unknown;
    for (let attempt = 0; attempt < DRAIN_ATTEMPTS; attempt++) {
      try {
        const text = await drain();
        // Leftovers come first; the marker closes the output once they are all out.
        if (text.trimEnd().endsWith(DRAINED_MARKER)) return;
        lastError = new Error('the read-out statement did not end with its marker');
      } catch (error) {
        lastError = error;
      }
    }
    unusable = new EngineSessionUnusableError(lastError);
  };

  return {
    run<T>(statement: () => Promise<T>): Promise<T> {
      const result = tail.then(async () => {
        if (unusable) throw unusable;
        try {
          return await statement();
        } catch (error) {
          await readOutLeftovers();
          throw error;
        }
      });
      tail = result.catch(() => undefined);
      return result;
    },
    async idle() {
      await tail;
    },
  };
}
