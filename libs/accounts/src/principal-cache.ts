import type { PersonalKeyLookup, Principal } from '@sightline/auth';
import type { Sql } from '@sightline/postgres';
import { findPrincipalByKeyHash } from './personal-keys.repository';

/** The Redis channel that announces a change to a user's personal API keys (distributed mode). */
export const PRINCIPAL_CHANGES_CHANNEL = 'sightline:principals:changed';

/**
 * Announcements that what a user's personal API keys authenticate as changed (a key's scopes or
 * restrictions changed, a key rolled or deleted), carried as project token changes are: Redis
 * pub/sub between processes, an in-process emitter in the embedded service. A message is a user
 * id; null means any user's may have (a subscriber that reconnected and may have missed some).
 * libs/bus' InvalidationChannel<number> is one.
 */
export interface PrincipalChanges {
  publish(userId: number): Promise<void>;
  subscribe(handler: (userId: number | null) => void): Promise<void>;
}

export interface PrincipalCache {
  /** The principal of a key hash, from the cache or the metadata store. */
  lookup: PersonalKeyLookup;
  /**
   * Drops the user's entries (null: every entry) in this process at once, as an announcement does:
   * what changed the user's keys calls it before announcing, so this process never waits for its
   * own announcement to come back through Redis.
   */
  forget(userId: number | null): void;
}

/** How long a looked-up key is trusted without a lookup: the net for an announcement lost between processes. */
export const PRINCIPAL_CACHE_MAX_AGE_MS = 3_000;

/**
 * Caches key hash → principal, so a burst of requests with one key does not query the metadata
 * store for each (on the embedded PGlite every statement is a hop to its thread and a parse and
 * plan). An entry lives `maxAgeMs` at most, and an announced change of its user's keys drops it
 * at once; a lookup an announcement overtook is not cached, so a revoked key is refused by the
 * very next request in this process. Unknown keys are not cached (a new key works at once, and
 * guessed keys cannot fill the cache). Failures are not cached. Entries are frozen: requests
 * share them.
 */
export function createPrincipalCache(
  db: Sql,
  options: {
    changes: Pick<PrincipalChanges, 'subscribe'>;
    maxAgeMs?: number;
    maxEntries?: number;
    now?: () => number;
    onError?: (error: unknown, context: string) => void;
  },
): PrincipalCache {
  const maxAge = options.maxAgeMs ?? PRINCIPAL_CACHE_MAX_AGE_MS;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { principal: Principal; expires: number }>();
  const inflight = new Map<string, Promise<Principal | null>>();
  let generation = 0;
  let cacheDisabled = false;

  const forget = (userId: number | null) => {
    generation++;
    // Lookups under way may have read the old key; later requests start their own.
    inflight.clear();
    if (userId === null) return cache.clear();
    for (const [hash, entry] of cache) if (entry.principal.userId === userId) cache.delete(hash);
  };
  options.changes.subscribe(forget).catch((error: unknown) => {
    // Without announcements entries could outlive a revocation by maxAgeMs: cache nothing then.
    cacheDisabled = true;
    cache.clear();
    options.onError?.(error, 'subscribing to personal API key changes');
  });

  const lookup: PersonalKeyLookup = (hash) => {
    const hit = cache.get(hash);
    if (hit) {
      if (hit.expires > now()) return Promise.resolve(hit.principal);
      cache.delete(hash);
    }
    let pending = inflight.get(hash);
    if (!pending) {
      const started = generation;
      const query: Promise<Principal | null> = findPrincipalByKeyHash(db, hash)
        .then((found) => {
          if (!found) return null;
          const principal = freezePrincipal(found);
          if (generation === started && !cacheDisabled && maxAge > 0) {
            if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
            cache.set(hash, { principal, expires: now() + maxAge });
          }
          return principal;
        })
        .finally(() => {
          if (inflight.get(hash) === query) inflight.delete(hash);
        });
      pending = query;
      inflight.set(hash, pending);
    }
    return pending;
  };
  return { lookup, forget };
}

function freezePrincipal(principal: Principal): Principal {
  Object.freeze(principal.scopes);
  if (principal.scopedTeams) Object.freeze(principal.scopedTeams);
  if (principal.scopedOrganizations) Object.freeze(principal.scopedOrganizations);
  return Object.freeze(principal);
}
