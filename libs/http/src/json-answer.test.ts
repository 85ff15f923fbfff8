import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { jsonByteLength, jsonChunks, sendChunks } from './json-answer';

async function text(value: unknown): Promise<string> {
  let out = '';
  for await (const chunk of jsonChunks(value)) out += chunk;
  return out;
}

describe('jsonChunks', () => {
  it.each([
    ['a number', 42],
    ['null', null],
    ['a string with quotes and non-ASCII', 'é "q" \u2028 😀'],
    ['nested arrays and objects', { a: [1, [2, [3, [4, { b: [5] }]]]], c: { d: { e: { f: { g: 1 } } } } }],
    ['what JSON.stringify leaves out or turns into null', { u: undefined, f: () => 1, s: Symbol('x'), list: [undefined, () => 1, NaN, Infinity] }],
    ['toJSON', { at: new Date(Date.UTC(2024, 0, 2)), custom: { toJSON: (key: string) => `key:${key}` }, list: [{ toJSON: () => 'x' }] }],
    ['empty containers', { a: [], b: {}, c: [[], {}] }],
    [
      'rows of plain values, and rows that are not',
      {
        results: [
          [1, 'é "q" \u2028', null, true, NaN, -0, Infinity, 1.5e300],
          [undefined, () => 1, new Date(Date.UTC(2024, 0, 2)), { toJSON: () => 'x' }, [1]],
          ['x'.repeat(70_000), 1],
          Array.from({ length: 300 }, (_, i) => i),
        ],
      },
    ],
    ['top-level undefined', undefined],
    [
      'one array in many places (made once)',
      (() => {
        const shared = ['a', 'b', { c: [1, 2] }];
        return { series: [1, 2, 3].map((i) => ({ i, days: shared, deep: { more: { days: shared } } })), again: shared };
      })(),
    ],
  ])('writes %s exactly as JSON.stringify does', async (_name, value) => {
    expect(await text(value)).toBe(JSON.stringify(value) ?? 'null');
  });

  it('makes a large answer in slices, letting other work run between them', async () => {
    const series = Array.from({ length: 40 }, (_, s) => ({
      label: `s${s}`,
      data: Array.from({ length: 3000 }, (_, i) => i * s),
      days: Array.from({ length: 3000 }, (_, i) => `day ${i}`),
    }));
    const value = { result: series, next: null };
    let turns = 0;
    const ticker = setInterval(() => (turns += 1), 0);
    let chunks = 0;
    let out = '';
    for await (const chunk of jsonChunks(value)) {
      chunks += 1;
      out += chunk;
    }
    clearInterval(ticker);
    expect(out).toBe(JSON.stringify(value));
    expect(chunks).toBeGreaterThan(10);
    // Timers ran while the text was being made: the event loop was not held for its whole length.
    expect(turns).toBeGreaterThan(0);
  });

  it('counts UTF-8 bytes and stops past a bound', async () => {
    const value = { text: 'é'.repeat(1000) };
    expect(await jsonByteLength(value)).toBe(Buffer.byteLength(JSON.stringify(value)));
    expect(await jsonByteLength(value, 100)).toBeNull();
  });
});

describe('sendChunks', () => {
  it('writes each chunk, waits for the socket to drain, lets other work run between chunks, and ends', async () => {
    const written: string[] = [];
    const res = Object.assign(new EventEmitter(), {
      destroyed: false,
      ended: false,
      write(chunk: string) {
        written.push(chunk);
        // The socket is full after every second chunk: drained a little later.
        if (written.length % 2 === 0) {
          setTimeout(() => res.emit('drain'), 1);
          return false;
        }
        return true;
      },
      end() {
        res.ended = true;
      },
    });
    let turns = 0;
    const ticker = setInterval(() => (turns += 1), 0);
    const chunks = Array.from({ length: 6 }, (_, i) => `chunk ${i};`);
    await sendChunks(res as unknown as Response, chunks);
    clearInterval(ticker);
    expect(written).toEqual(chunks);
    expect(res.ended).toBe(true);
    expect(turns).toBeGreaterThan(0);
  });

  it('stops writing once the response is gone', async () => {
    const written: string[] = [];
    const res = { destroyed: false, write: (chunk: string) => (written.push(chunk), (res.destroyed = true), true), end: jest.fn() };
    await sendChunks(res as unknown as Response, ['a', 'b', 'c']);
    expect(written).toEqual(['a']);
    expect(res.end).not.toHaveBeenCalled();
  });
});
