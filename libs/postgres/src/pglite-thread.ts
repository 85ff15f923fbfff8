import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { MetadataStore, QueryOptions, Sql } from './metadata-store';
import { errorFromWire, type PgliteRequest, type PgliteResponse, type PgliteThreadData } from './pglite-thread-protocol';

type Request = PgliteRequest extends infer R ? (R extends PgliteRequest ? Omit<R, 'id'> : never) : never;

/**
 * The embedded PostgreSQL in a thread of its own. PGlite is WebAssembly on the thread that
 * calls it: on the serving thread, every statement of the worker's persons step blocked
 * capture, decide and the API for its whole run. Here the serving thread only sends requests
 * and reads rows; PGlite parses, plans, runs and decodes on the other core. The thread still
 * runs one statement or transaction at a time, in the order they were sent.
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

  const call = (request: Request): Promise<PgliteResponse & { ok: true }> => {
    if (ended) return Promise.reject(ended);
    const id = nextId++;
    if (pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request });
    });
  };
  try {
    await opened;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  open = true;

  const sql = (tx?: number): Sql => ({
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      return (await call({ op: 'query', text, params, preparedName: options?.preparedName, tx })).rows as R[];
    },
    async exec(script: string) {
      await call({ op: 'exec', script, tx });
    },
  });
  return {
    ...sql(),
    oneTransactionAtATime: true,
    async transaction(fn) {
      const { tx } = await call({ op: 'begin' });
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
  };
}
