import type { PersonalKeyLookup, Principal } from '@sightline/auth';
import type { Sql } from '@sightline/postgres';
import { createAnnouncedCache } from './announced-cache';
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
 * plan), under announced-cache.ts's rules: a revoked key is refused by the very next request in
 * this process, and within `maxAgeMs` in the others.
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
  const cache = createAnnouncedCache<string, Principal, number>({
    ...options,
    read: (hash) => findPrincipalByKeyHash(db, hash),
    freeze: freezePrincipal,
    covers: (userId, _hash, principal) => principal.userId === userId,
    subscription: 'subscribing to personal API key changes',
    maxAgeMs: options.maxAgeMs ?? PRINCIPAL_CACHE_MAX_AGE_MS,
  });
  return { lookup: cache.get, forget: cache.forget };
}

function freezePrincipal(principal: Principal): Principal {
  Object.freeze(principal.scopes);
  if (principal.scopedTeams) Object.freeze(principal.scopedTeams);
  if (principal.scopedOrganizations) Object.freeze(principal.scopedOrganizations);
  return Object.freeze(principal);
}
