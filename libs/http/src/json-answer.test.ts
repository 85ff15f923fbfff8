import { jsonByteLength, jsonChunks } from './json-answer';

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
    ['top-level undefined', undefined],
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
