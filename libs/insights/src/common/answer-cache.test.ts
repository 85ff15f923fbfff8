import { createAnswerCache } from './answer-cache';

describe('the answer cache', () => {
  it('is bounded by the bytes of its answers, not their count: the least recently used leave first', () => {
    const cache = createAnswerCache<{ n: number }>({ ttlMs: 60_000, maxBytes: 1000 });
    for (let n = 0; n < 10; n++) cache.set(`k${n}`, { n }, 200, 0);
    expect(cache.bytes).toBeLessThanOrEqual(1000);
    expect(cache.size).toBe(5);
    expect(cache.get('k0', 1)).toBeUndefined();
    expect(cache.get('k9', 1)).toEqual({ n: 9 });
  });

  it('does not keep an answer larger than a quarter of its bound', () => {
    const cache = createAnswerCache<{ n: number }>({ ttlMs: 60_000, maxBytes: 1000 });
    cache.set('small', { n: 1 }, 100, 0);
    cache.set('large', { n: 2 }, 251, 0);
    expect(cache.get('large', 1)).toBeUndefined();
    expect(cache.get('small', 1)).toEqual({ n: 1 });
  });

  it('answers only within the TTL of the request clock', () => {
    const cache = createAnswerCache<{ n: number }>({ ttlMs: 1000, maxBytes: 1000 });
    cache.set('k', { n: 1 }, 10, 5000);
    expect(cache.get('k', 5999)).toEqual({ n: 1 });
    expect(cache.get('k', 6000)).toBeUndefined();
    // Read past its TTL, the entry is gone, not kept for the next reader.
    expect(cache.size).toBe(0);
  });

  it('drops expired answers that nobody reads again', async () => {
    const cache = createAnswerCache<{ n: number }>({ ttlMs: 50, maxBytes: 1000 });
    cache.set('k', { n: 1 }, 10, Date.now());
    expect(cache.size).toBe(1);
    // The cache's own purge timer (lru-cache's clock, not one a test can move) drops it.
    // Polled: jest's test timeout bounds the wait.
    while (cache.size > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });
});
