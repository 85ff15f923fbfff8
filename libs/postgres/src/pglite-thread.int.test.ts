import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { createPgliteThreadStore } from './pglite-thread';

/**
 * The embedded PostgreSQL's thread gone while the store is open leaves a process that can store
 * nothing again: the store says so once (the service then exits non-zero), and only then. The
 * thread is ended from outside to stand in for a crash inside PGlite's WebAssembly.
 */
describe('PGlite thread store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-pglite-thread-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reports itself lost, once, when its thread dies while open, and fails every later statement', async () => {
    const lost: Error[] = [];
    let thread: Worker | undefined;
    const db = await createPgliteThreadStore(join(dir, 'postgres'), true, { onLost: (error) => lost.push(error), onThread: (t) => (thread = t) });
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await thread!.terminate();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lost).toHaveLength(1);
    expect(lost[0]!.message).toMatch(/PGlite thread exited/);
    await expect(db.query('SELECT 1')).rejects.toThrow(/PGlite thread exited/);
  });

  it('does not report a closed store as lost', async () => {
    const lost: Error[] = [];
    const db = await createPgliteThreadStore(join(dir, 'postgres'), true, { onLost: (error) => lost.push(error) });
    await db.query('SELECT 1');
    await db.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lost).toEqual([]);
  });

  it("runs serving statements ahead of the background ones waiting for the thread (the management API's behind decide's)", async () => {
    const db = await createPgliteThreadStore(join(dir, 'postgres'), true);
    try {
      const background = db.withPriority!('background');
      const done: string[] = [];
      const slow = 'SELECT count(*) FROM generate_series(1, 300000)';
      const queued = Array.from({ length: 8 }, (_, i) => background.query(slow).then(() => done.push(`background ${i}`)));
      const serving = db.query('SELECT 1').then(() => done.push('serving'));
      await Promise.all([...queued, serving]);
      // Behind at most the two background statements already with the thread and one that had
      // waited past its bound (every other turn is theirs then), not all eight.
      expect(done.indexOf('serving')).toBeLessThanOrEqual(3);
    } finally {
      await db.close();
    }
  });

  it('still runs a background statement while serving statements keep arriving (no starvation)', async () => {
    const db = await createPgliteThreadStore(join(dir, 'postgres'), true);
    try {
      const background = db.withPriority!('background');
      let servingDone = 0;
      let stop = false;
      // More serving clients than statements sent ahead, each sending its next statement as soon
      // as the last one is answered: the serving queue is never empty.
      const serving = [0, 1, 2, 3, 4, 5].map(async () => {
        while (!stop) {
          await db.query('SELECT count(*) FROM generate_series(1, 20000)');
          servingDone++;
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await background.query('SELECT 1');
      const servedMeanwhile = servingDone;
      stop = true;
      await Promise.all(serving);
      // It went once it had waited its turn, not after the serving stream ended.
      expect(servedMeanwhile).toBeGreaterThan(0);
      expect(servingDone - servedMeanwhile).toBeLessThanOrEqual(6);
    } finally {
      await db.close();
    }
  });

  it("sends a transaction's own statements at once, whatever waits in either queue", async () => {
    const db = await createPgliteThreadStore(join(dir, 'postgres'), true);
    try {
      const background = db.withPriority!('background');
      await db.exec('CREATE TABLE t (n int)');
      const tx = background.transaction(async (sql) => {
        await sql.query('INSERT INTO t VALUES (1)');
        // Sent while the transaction is open: they wait for it in the thread, and it must not wait for them.
        const others = [db.query('SELECT count(*)::int AS n FROM t'), background.query('SELECT 2'), db.query('SELECT 3')];
        await sql.query('INSERT INTO t VALUES (2)');
        return others;
      });
      const others = await tx;
      expect(await others[0]).toEqual([{ n: 2 }]);
      await Promise.all(others);
    } finally {
      await db.close();
    }
  });
});
