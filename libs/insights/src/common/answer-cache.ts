import { LRUCache } from 'lru-cache';

/** What the answer cache holds at most, in bytes of the answers' JSON; an answer larger than a quarter of it is not kept. */
export const DEFAULT_ANSWER_CACHE_BYTES = 64 * 1024 * 1024;

export interface AnswerCache<V> {
  /** The answer stored under `key` less than the TTL before `nowMs` (the request's clock). */
  get(key: string, nowMs: number): V | undefined;
  /** Keeps `value`, weighing `bytes`, evicting the least recently used answers past the byte bound. */
  set(key: string, value: V, bytes: number, nowMs: number): void;
  /** Bytes of the answers held. */
  readonly bytes: number;
  readonly size: number;
}

/**
 * Query answers for `ttlMs`, bounded by their bytes (the size of their JSON), not their count:
 * a few large answers cannot fill the heap. Entries also leave once their TTL has passed on the
 * process's clock, read or not, so expired answers do not stay until they are pushed out.
 */
export function createAnswerCache<V extends object>(options: { ttlMs: number; maxBytes: number }): AnswerCache<V> {
  const cache = new LRUCache<string, { value: V; at: number }>({
    maxSize: options.maxBytes,
    maxEntrySize: Math.max(1, Math.floor(options.maxBytes / 4)),
    ttl: options.ttlMs,
    ttlAutopurge: true,
  });
  return {
    get(key, nowMs) {
      const hit = cache.get(key);
      if (!hit) return undefined;
      if (nowMs - hit.at < options.ttlMs) return hit.value;
      cache.delete(key);
      return undefined;
    },
    set(key, value, bytes, nowMs) {
      if (bytes > Math.floor(options.maxBytes / 4)) {
        cache.delete(key);
        return;
      }
      cache.set(key, { value, at: nowMs }, { size: Math.max(1, bytes) });
    },
    get bytes() {
      return cache.calculatedSize;
    },
    get size() {
      return cache.size;
    },
  };
}
