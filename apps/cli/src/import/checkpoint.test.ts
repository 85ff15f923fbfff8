import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LineWatermark, readCheckpoint, writeCheckpoint } from './checkpoint';

describe('line watermark', () => {
  it('advances only over a contiguous prefix of settled lines', () => {
    const w = new LineWatermark();
    w.opened(1, 1);
    w.read(100);
    w.opened(2, 101);
    w.read(180); // lines 181–190 rejected, read past them
    w.read(190);
    expect(w.linesDone).toBe(0);
    w.acknowledged(2); // out of order: batch 1 still open
    expect(w.linesDone).toBe(0);
    w.acknowledged(1);
    expect(w.linesDone).toBe(190);
  });
  it('starts from a resumed position', () => {
    const w = new LineWatermark(500);
    expect(w.linesDone).toBe(500);
    w.opened(1, 501);
    w.read(600);
    expect(w.linesDone).toBe(500);
  });
});

describe('checkpoint file', () => {
  it('is replaced whole and read back', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ckpt-')), 'import.json');
    writeCheckpoint(file, { version: 1, files: [{ path: 'a.jsonl', identity: 'abc', linesDone: 10, complete: false }] });
    writeCheckpoint(file, { version: 1, files: [{ path: 'a.jsonl', identity: 'abc', linesDone: 20, complete: true }] });
    expect(readCheckpoint(file)?.files[0]).toEqual({ path: 'a.jsonl', identity: 'abc', linesDone: 20, complete: true });
    expect(fs.readdirSync(path.dirname(file))).toEqual(['import.json']);
  });
});
