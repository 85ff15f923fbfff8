import type { Sql } from '@sightline/postgres';
import { findProjectById, type Project } from './projects.repository';

/** The Redis channel that announces a change to a project's row (distributed mode). */
export const PROJECT_CHANGES_CHANNEL = 'sightline:projects:changed';

/**
 * Announcements that a project's row changed (its settings, its API key), carried as the
 * principal changes are: Redis pub/sub between processes, an in-process emitter in the embedded
 * service. A message is a project id; null means any project may have (a subscriber that
 * reconnected and may have missed some). libs/bus' InvalidationChannel<number> is one.
 */
export interface ProjectChanges {
  publish(projectId: number): Promise<void>;
  subscribe(handler: (projectId: number | null) => void): Promise<void>;
}

export interface ProjectCache {
  /** The project of an id, from the cache or the metadata store; null when there is none. */
  findById(id: number): Promise<Project | null>;
  /**
   * Drops the project's entry (null: every entry) in this process at once, as an announcement
   * does: what changed the project calls it before announcing, so this process never waits for
   * its own announcement to come back through Redis.
   */
  forget(projectId: number | null): void;
}

/** How long a read project is used without a read: the net for an announcement lost between processes. */
export const PROJECT_CACHE_MAX_AGE_MS = 3_000;

/**
 * Caches project id → project row, so every request to a project's routes (the query API's
 * fixed cost above all) does not read the row from the metadata store (on the embedded PGlite a
 * hop to its thread, a parse and a plan). The same rules as the principal cache: an entry lives
 * `maxAgeMs` at most; an announced change drops it at once; a read an announcement overtook is
 * not cached, so the next request of the process that changed the project sees the change;
 * unknown ids and failures are never cached (a new project is seen at once, guessed ids cannot
 * fill the cache). Entries are frozen to their leaves: requests share them.
 *
 * What a cached row decides about access cannot widen it: a key reaches a project by its id and
 * organisation, which never change (Sightline moves no project between organisations and deletes
 * none); the key's own scopes and restrictions come from the principal, looked up separately.
 */
export function createProjectCache(
  db: Sql,
  options: {
    changes: Pick<ProjectChanges, 'subscribe'>;
    maxAgeMs?: number;
    maxEntries?: number;
    now?: () => number;
    onError?: (error: unknown, context: string) => void;
  },
): ProjectCache {
  const maxAge = options.maxAgeMs ?? PROJECT_CACHE_MAX_AGE_MS;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<number, { project: Project; expires: number }>();
  const inflight = new Map<number, Promise<Project | null>>();
  let generation = 0;
  let cacheDisabled = false;

  const forget = (projectId: number | null) => {
    generation++;
    // Reads under way may have read the old row; later requests start their own.
    inflight.clear();
    if (projectId === null) cache.clear();
    else cache.delete(projectId);
  };
  options.changes.subscribe(forget).catch((error: unknown) => {
    // Without announcements entries could outlive a change by maxAgeMs: cache nothing then.
    cacheDisabled = true;
    cache.clear();
    options.onError?.(error, 'subscribing to project changes');
  });

  const findById = (id: number): Promise<Project | null> => {
    const hit = cache.get(id);
    if (hit) {
      if (hit.expires > now()) return Promise.resolve(hit.project);
      cache.delete(id);
    }
    let pending = inflight.get(id);
    if (!pending) {
      const started = generation;
      const read: Promise<Project | null> = findProjectById(db, id)
        .then((found) => {
          if (!found) return null;
          const project = deepFreeze(found);
          if (generation === started && !cacheDisabled && maxAge > 0) {
            if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
            cache.set(id, { project, expires: now() + maxAge });
          }
          return project;
        })
        .finally(() => {
          if (inflight.get(id) === read) inflight.delete(id);
        });
      pending = read;
      inflight.set(id, pending);
    }
    return pending;
  };
  return { findById, forget };
}

/** The row and every object or array in it (test_account_filters is JSON) frozen. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
