/**
 * A per-process cache of metadata-store reads whose changes are announced (Redis pub/sub between
 * processes, an in-process emitter in the embedded service): the principal and project caches.
 * The rules both keep:
 * - an entry lives `maxAgeMs` at most: the net for an announcement lost between processes;
 * - an announced change drops its entries at once, and a read an announcement overtook is not
 *   cached, so the next request of the process that made the change sees it;
 * - misses (null) and failures are never cached: a new row is seen at once, and guessed keys
 *   cannot fill the cache;
 * - a failed subscription turns caching off (entries could then outlive a change);
 * - entries are frozen by `freeze`: requests share them.
 */
export interface AnnouncedCache<K, V, Id> {
  /** The value of a key, from the cache or `read`; null when there is none. */
  get(key: K): Promise<V | null>;
  /**
   * Drops the entries `id` covers (null: every entry) in this process at once, as an announcement
   * does: what made the change calls it before announcing, so this process never waits for its
   * own announcement to come back through Redis.
   */
  forget(id: Id | null): void;
}

export function createAnnouncedCache<K, V, Id>(options: {
  read: (key: K) => Promise<V | null>;
  freeze: (value: V) => V;
  /** Whether an announcement of `id` drops the entry of `key`. */
  covers: (id: Id, key: K, value: V) => boolean;
  changes: { subscribe(handler: (id: Id | null) => void): Promise<void> };
  /** What the subscription is, for onError. */
  subscription: string;
  maxAgeMs: number;
  maxEntries?: number;
  now?: () => number;
  onError?: (error: unknown, context: string) => void;
}): AnnouncedCache<K, V, Id> {
  const { maxAgeMs } = options;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<K, { value: V; expires: number }>();
  const inflight = new Map<K, Promise<V | null>>();
  let generation = 0;
  let cacheDisabled = false;

  const forget = (id: Id | null) => {
    generation++;
    // Reads under way may have read the old row; later requests start their own.
    inflight.clear();
    if (id === null) return cache.clear();
    for (const [key, entry] of cache) if (options.covers(id, key, entry.value)) cache.delete(key);
  };
  options.changes.subscribe(forget).catch((error: unknown) => {
    cacheDisabled = true;
    cache.clear();
    options.onError?.(error, options.subscription);
  });

  const get = (key: K): Promise<V | null> => {
    const hit = cache.get(key);
    if (hit) {
      if (hit.expires > now()) return Promise.resolve(hit.value);
      cache.delete(key);
    }
    let pending = inflight.get(key);
    if (!pending) {
      const started = generation;
      const read: Promise<V | null> = options
        .read(key)
        .then((found) => {
          if (!found) return null;
          const value = options.freeze(found);
          if (generation === started && !cacheDisabled && maxAgeMs > 0) {
            if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
            cache.set(key, { value, expires: now() + maxAgeMs });
          }
          return value;
        })
        .finally(() => {
          if (inflight.get(key) === read) inflight.delete(key);
        });
      pending = read;
      inflight.set(key, pending);
    }
    return pending;
  };
  return { get, forget };
}
