/**
 * The PGlite thread (see pglite-thread.ts): opens the embedded database and answers the
 * serving thread's requests in the order they arrive, which is the order PGlite runs them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Sql } from './store-interfaces';
import { openPgliteSession } from './pglite-session';
import { errorToWire, type PgliteRequest, type PgliteResponse, type PgliteThreadData } from './pglite-thread-protocol';

const port = parentPort!;
const { dir, useTemplate } = workerData as PgliteThreadData;
const opening = openPgliteSession(dir, useTemplate);
opening.then(
  () => port.postMessage({ id: 0, ok: true } satisfies PgliteResponse),
  (error: unknown) => port.postMessage({ id: 0, ok: false, error: errorToWire(error) } satisfies PgliteResponse),
);

interface OpenTransaction {
  sql?: Sql;
  finish: (commit: boolean) => void;
  outcome: Promise<void>;
}
const ROLLBACK = Symbol('rollback');
const transactions = new Map<number, OpenTransaction>();
let nextTransaction = 1;

async function answer(request: PgliteRequest, store: Awaited<typeof opening>): Promise<Omit<PgliteResponse & { ok: true }, 'id' | 'ok'>> {
  switch (request.op) {
    case 'query': {
      const target = request.tx === undefined ? store : transactions.get(request.tx)?.sql;
      if (!target) throw new Error(`PGlite thread: no open transaction ${request.tx}`);
      return { rows: await target.query(request.text, request.params, request.preparedName ? { preparedName: request.preparedName } : undefined) };
    }
    case 'exec': {
      const target = request.tx === undefined ? store : transactions.get(request.tx)?.sql;
      if (!target) throw new Error(`PGlite thread: no open transaction ${request.tx}`);
      await target.exec(request.script);
      return {};
    }
    case 'begin': {
      const tx = nextTransaction++;
      let finish!: (commit: boolean) => void;
      const finished = new Promise<boolean>((resolve) => (finish = resolve));
      let opened!: () => void;
      const isOpen = new Promise<void>((resolve) => (opened = resolve));
      const entry: OpenTransaction = {
        finish,
        outcome: store.transaction(async (sql) => {
          entry.sql = sql;
          opened();
          if (!(await finished)) throw ROLLBACK;
        }),
      };
      transactions.set(tx, entry);
      // A transaction that could not begin rejects its outcome instead of opening.
      await Promise.race([isOpen, entry.outcome]);
      return { tx };
    }
    case 'commit':
    case 'rollback': {
      const entry = transactions.get(request.tx);
      if (!entry) throw new Error(`PGlite thread: no open transaction ${request.tx}`);
      transactions.delete(request.tx);
      entry.finish(request.op === 'commit');
      await entry.outcome.catch((error: unknown) => {
        if (error !== ROLLBACK) throw error;
      });
      return {};
    }
    case 'ping':
      await store.ping();
      return {};
    case 'close':
      await store.close();
      return {};
  }
}

port.on('message', (request: PgliteRequest) => {
  // Every request starts in arrival order (the opening is awaited in a FIFO queue of continuations).
  opening
    .then((store) => answer(request, store))
    .then(
      (result) => port.postMessage({ id: request.id, ok: true, ...result } satisfies PgliteResponse),
      (error: unknown) => port.postMessage({ id: request.id, ok: false, error: errorToWire(error) } satisfies PgliteResponse),
    );
});
