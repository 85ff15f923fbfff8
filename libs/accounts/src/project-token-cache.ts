import type { Sql } from '@sightline/postgres';
import { findProjectByToken } from './projects.repository';

/** Project id for a token, null when no project has it; rejects when the store is unreachable. */
export type ProjectTokenLookup = (token: string) => Promise<number | null>;

/** A project API key is 1 to 200 printable ASCII characters (PostHog checks the shape before any lookup). */
export function isProjectKeyShaped(token: string): boolean {
  return /^[\x21-\x7e]{1,200}$/.test(token);
}

/** The Redis channel that announces a project's new API key (distributed mode). */
export const PROJECT_TOKEN_CHANGES_CHANNEL = 'sightline:project-tokens:changed';

/**
 * Announcements that a project's API key changed (`reset_token`), carried as flag changes are:
 * Redis pub/sub between processes, an in-process emitter in the embedded service. A message is a
 * project id; null means any project's may have (a subscriber that reconnected and may have
 * missed some). libs/bus' InvalidationChannel<number> is one.
 */
export interface ProjectTokenChanges {
  publish(teamId: number): Promise<void>;
  subscribe(handler: (teamId: number | null) => void): Promise<void>;
}

/**
 * Caches token → project id: known tokens for minutes (they rarely change), unknown ones
 * for seconds (so a project created a moment ago works at once). Concurrent lookups of
 * one token share a query; failures are not cached. With `changes`, an announced key change
 * drops the project's cached tokens (and every unknown one) at once, and a lookup that an
 * announcement overtook is not cached, so the old key stops working everywhere at once.
 */
export function createProjectTokenCache(
  db: Sql,
  options: {
    positiveTtlMs?: number;
    negativeTtlMs?: number;
    maxEntries?: number;
    now?: () => number;
    changes?: Pick<ProjectTokenChanges, 'subscribe'>;
    onError?: (error: unknown, context: string) => void;
  } = {},
): ProjectTokenLookup {
  const positiveTtl = options.positiveTtlMs ?? 5 * 60_000;
  const negativeTtl = options.negativeTtlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { teamId: number | null; expires: number }>();
  const inflight = new Map<string, Promise<number | null>>();
  let generation = 0;

  const forget = (teamId: number | null) => {
    generation++;
    // Lookups under way may have read the old key; later requests start their own.
    inflight.clear();
    if (teamId === null) return cache.clear();
    for (const [token, entry] of cache) if (entry.teamId === teamId || entry.teamId === null) cache.delete(token);
  };
  options.changes?.subscribe(forget).catch((error: unknown) => options.onError?.(error, 'subscribing to project API key changes'));

  return (token) => {
    // What cannot be a project key is unknown without a query: a NUL would fail the query, and
    // megabyte strings would fill the cache.
    if (!isProjectKeyShaped(token)) return Promise.resolve(null);
    const hit = cache.get(token);
    if (hit && hit.expires > now()) return Promise.resolve(hit.teamId);
    let pending = inflight.get(token);
    if (!pending) {
      const started = generation;
      const lookup: Promise<number | null> = findProjectByToken(db, token)
        .then((project) => {
          const teamId = project?.id ?? null;
          if (generation === started) {
            if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
            cache.set(token, { teamId, expires: now() + (teamId === null ? negativeTtl : positiveTtl) });
          }
          return teamId;
        })
        .finally(() => {
          if (inflight.get(token) === lookup) inflight.delete(token);
        });
      pending = lookup;
      inflight.set(token, pending);
    }
    return pending;
  };
}
