import type { Sql } from '@sightline/postgres';
import { loadProjectFlagDefinitions, type ProjectFlagDefinitions } from './definitions.repository';
import type { InvalidationChannel } from '@sightline/bus';

/** What the management routes call after every write to flags or cohorts of a project. */
export interface FlagChangeNotifier {
  flagsChanged(teamId: number): Promise<void>;
}

export interface CachedDefinitions {
  definitions: ProjectFlagDefinitions;
  /** false: the store could not be read and these are the last definitions that could. */
  fresh: boolean;
}

export interface FlagDefinitionsCache {
  get(teamId: number): Promise<CachedDefinitions>;
  /** Resolves once this process listens for change announcements. */
  ready: Promise<void>;
  notifier: FlagChangeNotifier;
  close(): Promise<void>;
}

export interface FlagDefinitionsCacheOptions {
  db: Sql;
  channel: InvalidationChannel;
  /**
   * Safety net for changes nobody announced (group types created by the worker, rows
   * edited by hand) and for announcements lost while Redis was unreachable: definitions
   * older than this are reloaded in the background while they keep answering.
   */
  maxAgeMs?: number;
  now?: () => number;
  onError?: (error: unknown, context: string) => void;
}

interface Entry {
  loaded: Promise<ProjectFlagDefinitions>;
  loadedAt: number;
  /** A background reload of these definitions is running. */
  refreshing?: boolean;
  /** The last background reload failed: these are the last definitions that could be read. */
  refreshFailed?: boolean;
}

/** Whether two loads of a project's definitions read the same rows. */
function sameDefinitions(a: ProjectFlagDefinitions, b: ProjectFlagDefinitions): boolean {
  const text = (d: ProjectFlagDefinitions) =>
    JSON.stringify([d.teamId, d.flags, [...d.cohorts], [...d.groupTypeNames], [...d.groupTypeIndexes], d.usesStaticCohorts]);
  return text(a) === text(b);
}

/** After a failed background reload, the next one is tried this much later (not on every request). */
const REFRESH_RETRY_MS = 1_000;

/**
 * Definitions per project, loaded once and kept until a change is announced on the
 * channel (every API process subscribes), or until maxAgeMs. Concurrent requests share
 * one load; a load that an invalidation overtook is not cached. When the store is down,
 * the last good definitions keep serving (marked not fresh).
 *
 * An announced change drops the project's definitions: the next request waits for the new
 * ones. Expiry does not: definitions older than maxAgeMs keep answering while one background
 * load replaces them, so flag requests never queue behind the safety net's reload (which
 * would stall every request of the project for a store round trip every maxAgeMs).
 */
export function createFlagDefinitionsCache(options: FlagDefinitionsCacheOptions): FlagDefinitionsCache {
  const maxAgeMs = options.maxAgeMs ?? 30_000;
  const now = options.now ?? Date.now;
  const entries = new Map<number, Entry>();
  const lastGood = new Map<number, ProjectFlagDefinitions>();
  const generations = new Map<number, number>();
  let globalGeneration = 0;
  const generationOf = (teamId: number) => `${globalGeneration}:${generations.get(teamId) ?? 0}`;

  const invalidate = (teamId: number | null) => {
    if (teamId === null) {
      globalGeneration++;
      entries.clear();
    } else {
      generations.set(teamId, (generations.get(teamId) ?? 0) + 1);
      entries.delete(teamId);
    }
  };
  const ready = options.channel.subscribe(invalidate);
  ready.catch((error: unknown) => options.onError?.(error, 'subscribing to flag change announcements'));

  /** The project's definitions from the store, kept as the last good copy. */
  const read = (teamId: number) =>
    loadProjectFlagDefinitions(options.db, teamId).then((definitions) => {
      lastGood.set(teamId, definitions);
      return definitions;
    });

  const load = (teamId: number): Entry => {
    const generation = generationOf(teamId);
    const entry: Entry = {
      loadedAt: now(),
      loaded: read(teamId).catch((error: unknown) => {
        if (entries.get(teamId) === entry) entries.delete(teamId); // failures are not cached
        throw error;
      }),
    };
    entries.set(teamId, entry);
    // An invalidation that lands while this load runs must not leave its result cached.
    void entry.loaded.then(
      () => {
        if (generationOf(teamId) !== generation && entries.get(teamId) === entry) entries.delete(teamId);
      },
      () => undefined,
    );
    return entry;
  };

  /** Reloads an expired entry's definitions; it keeps answering until the new ones are in. */
  const refresh = (teamId: number, stale: Entry) => {
    stale.refreshing = true;
    const generation = generationOf(teamId);
    const previous = lastGood.get(teamId);
    read(teamId).then(
      (read) => {
        stale.refreshing = false;
        // An announcement (or another load) since the start decides instead.
        if (entries.get(teamId) !== stale || generationOf(teamId) !== generation) return;
        // Unchanged: the same object, so what callers keep per definitions (decide's reused evaluations) stays.
        const definitions = previous && sameDefinitions(previous, read) ? previous : read;
        lastGood.set(teamId, definitions);
        entries.set(teamId, { loaded: Promise.resolve(definitions), loadedAt: now() });
      },
      (error: unknown) => {
        stale.refreshing = false;
        stale.refreshFailed = true;
        stale.loadedAt = now() - maxAgeMs + REFRESH_RETRY_MS;
        options.onError?.(error, `flag definitions of project ${teamId}: reloading them, serving the last good copy`);
      },
    );
  };

  return {
    ready,
    async get(teamId) {
      let entry = entries.get(teamId);
      if (!entry) entry = load(teamId);
      else if (now() - entry.loadedAt > maxAgeMs && !entry.refreshing) refresh(teamId, entry);
      try {
        return { definitions: await entry.loaded, fresh: !entry.refreshFailed };
      } catch (error) {
        const stale = lastGood.get(teamId);
        if (!stale) throw error;
        options.onError?.(error, `flag definitions of project ${teamId}: serving the last good copy`);
        return { definitions: stale, fresh: false };
      }
    },
    notifier: {
      async flagsChanged(teamId) {
        invalidate(teamId); // this process at once, whatever happens to the broadcast
        try {
          await options.channel.publish(teamId);
        } catch (error) {
          // The write itself succeeded; other processes catch up within maxAgeMs.
          options.onError?.(error, `announcing a flag change of project ${teamId}`);
        }
      },
    },
    close: () => options.channel.close(),
  };
}
