import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { MetadataStore, QueryOptions, Sql, StorePriority } from './store-interfaces';
import { errorFromWire, type PgliteRequest, type PgliteResponse, type PgliteThreadData } from './pglite-thread-protocol';

/**
 * Statements sent to the thread at once from the two queues: more would let background work
 * line up in the thread ahead of a serving statement; fewer would leave the thread idle while
 * the serving thread is busy between two answers.
 */
const SENT_AHEAD = 2;

/**
 * A background statement that has waited this long takes every other turn from serving ones:
 * under a steady stream of serving work (an import's persons, decide) the management API would
 * otherwise wait without end, and serving work still gets at least half the turns.
 */
const BACKGROUND_MAX_WAIT_MS = 100;

type Request = PgliteRequest extends infer R ? (R extends PgliteRequest ? Omit<R, 'id'> : never) : never;

/**
 * The embedded PostgreSQL in a thread of its own. PGlite is WebAssembly on the thread that
 * calls it: on the serving thread, every statement of the worker's persons step blocked
 * capture, decide and the API for its whole run. Here the serving thread only sends requests
 * and reads rows; PGlite parses, plans, runs and decodes on the other core. The thread still
 * runs one statement or transaction at a time: serving statements are sent to it ahead of
 * background ones (withPriority), each queue in its order.
 */
export async function createPgliteThreadStore(
  dir: string,
  useTemplate: boolean,
  options: {
    /** Called once when the thread fails or exits while the store is open (not on close). */
    onLost?: (error: Error) => void;
    /** Test seam: receives the thread once started (a test ends it to stand in for a crash). */
    onThread?: (thread: Worker) => void;
  } = {},
): Promise<MetadataStore> {
  const worker = new Worker(join(__dirname, 'pglite-thread.js'), {
    workerData: { dir, useTemplate } satisfies PgliteThreadData,
    // Profiling flags follow into the thread (its own profile); the serving thread's loaders do not.
    execArgv: process.execArgv.filter((flag) => flag.startsWith('--cpu-prof')),
  });
  options.onThread?.(worker);
  const pending = new Map<number, { resolve: (response: PgliteResponse & { ok: true }) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let ended: Error | null = null;
  // The thread keeps the process alive only while a request is waiting for it.
  const settle = (id: number) => {
    const waiter = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return waiter;
  };
  const opened = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (response: PgliteResponse) => {
    const waiter = settle(response.id);
    if (response.ok) waiter?.resolve(response);
    else waiter?.reject(errorFromWire(response.error));
  });
  let open = false;
  const fail = (error: Error) => {
    const lost = open && !ended;
    ended ??= error;
    for (const id of [...pending.keys()]) settle(id)?.reject(error);
    if (lost) options.onLost?.(error);
  };
  worker.on('error', (error) => fail(new Error(`PGlite thread failed: ${error.message}`, { cause: error })));
  worker.on('exit', (code) => fail(new Error(`PGlite thread exited (code ${code})`)));

  const send = (request: Request): Promise<PgliteResponse & { ok: true }> => {
    if (ended) return Promise.reject(ended);
    const id = nextId++;
    if (pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request });
    });
  };

  // Statements that start a unit of work wait here, serving ones first, while SENT_AHEAD of them
  // are with the thread; the thread runs what it has in the order it came. A transaction's own
  // statements (and its commit) go at once: the thread holds everything else behind an open
  // transaction, so holding them here too could wait forever.
  const waiting: Record<StorePriority, { since: number; run: () => void }[]> = { serving: [], background: [] };
  let sentAhead = 0;
  let lastTurnOverdue = false;
  const sendNext = () => {
    while (sentAhead < SENT_AHEAD) {
      const overdue = !lastTurnOverdue && (waiting.background[0]?.since ?? Infinity) <= Date.now() - BACKGROUND_MAX_WAIT_MS;
      const next = overdue ? waiting.background.shift() : (waiting.serving.shift() ?? waiting.background.shift());
      lastTurnOverdue = overdue;
      if (!next) return;
      sentAhead++;
      next.run();
    }
  };
  const call = (request: Request, priority: StorePriority = 'serving'): Promise<PgliteResponse & { ok: true }> => {
    if ('tx' in request && request.tx !== undefined) return send(request);
    return new Promise((resolve, reject) => {
      waiting[priority].push({
        since: Date.now(),
        run: () =>
          send(request)
            .then(resolve, reject)
            .finally(() => {
              sentAhead--;
              sendNext();
            }),
      });
      sendNext();
    });
  };
  try {
    await opened;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  open = true;

  const sql = (tx?: number, priority?: StorePriority): Sql => ({
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      return (await call({ op: 'query', text, params, preparedName: options?.preparedName, tx }, priority)).rows as R[];
    },
    async exec(script: string) {
      await call({ op: 'exec', script, tx }, priority);
    },
  });
  const store = (priority: StorePriority): MetadataStore => ({
    ...sql(undefined, priority),
    oneTransactionAtATime: true,
    withPriority: (other) => stores[other],
    async transaction(fn) {
      const { tx } = await call({ op: 'begin' }, priority);
      let result;
      try {
        result = await fn(sql(tx!));
      } catch (error) {
        await call({ op: 'rollback', tx: tx! }).catch(() => undefined);
        throw error;
      }
      await call({ op: 'commit', tx: tx! });
      return result;
    },
    async ping() {
      await call({ op: 'ping' });
    },
    async close() {
      if (ended) return;
      try {
        await call({ op: 'close' });
      } finally {
        ended = new Error('metadata store closed');
        await worker.terminate();
      }
    },
  });
  const stores: Record<StorePriority, MetadataStore> = { serving: store('serving'), background: store('background') };
  return stores.serving;
}
