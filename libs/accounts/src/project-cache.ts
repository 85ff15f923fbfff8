import type { Sql } from '@sightline/postgres';
import { createAnnouncedCache } from './announced-cache';
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
 * hop to its thread, a parse and a plan), under announced-cache.ts's rules, as principals are.
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
  const cache = createAnnouncedCache<number, Project, number>({
    ...options,
    read: (id) => findProjectById(db, id),
    freeze: deepFreeze,
    covers: (projectId, id) => id === projectId,
    subscription: 'subscribing to project changes',
    maxAgeMs: options.maxAgeMs ?? PROJECT_CACHE_MAX_AGE_MS,
  });
  return { findById: cache.get, forget: cache.forget };
}

/** The row and every object or array in it (test_account_filters is JSON) frozen. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
