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
});
