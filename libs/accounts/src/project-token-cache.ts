import type { Sql } from '@sightline/postgres';
import { findProjectByToken } from './projects.repository';

/** Project id for a token, null when no project has it; rejects when the store is unreachable. */
export type ProjectTokenLookup = (token: string) => Promise<number | null>;

/**
 * Caches token → project id: known tokens for minutes (they rarely change), unknown ones
 * for seconds (so a project created a moment ago works at once). Concurrent lookups of
 * one token share a query; failures are not cached.
 */
/** A project API key is 1 to 200 printable ASCII characters (PostHog checks the shape before any lookup). */
export function isProjectKeyShaped(token: string): boolean {
  return /^[\x21-\x7e]{1,200}$/.test(token);
}

export function createProjectTokenCache(
  db: Sql,
  options: { positiveTtlMs?: number; negativeTtlMs?: number; maxEntries?: number; now?: () => number } = {},
): ProjectTokenLookup {
  const positiveTtl = options.positiveTtlMs ?? 5 * 60_000;
  const negativeTtl = options.negativeTtlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { teamId: number | null; expires: number }>();
  const inflight = new Map<string, Promise<number | null>>();

  return (token) => {
    // What cannot be a project key is unknown without a query: a NUL would fail the query, and
    // megabyte strings would fill the cache.
    if (!isProjectKeyShaped(token)) return Promise.resolve(null);
    const hit = cache.get(token);
    if (hit && hit.expires > now()) return Promise.resolve(hit.teamId);
    let pending = inflight.get(token);
    if (!pending) {
      pending = findProjectByToken(db, token)
        .then((project) => {
          const teamId = project?.id ?? null;
          if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
          cache.set(token, { teamId, expires: now() + (teamId === null ? negativeTtl : positiveTtl) });
          return teamId;
        })
        .finally(() => inflight.delete(token));
      inflight.set(token, pending);
    }
    return pending;
  };
}
