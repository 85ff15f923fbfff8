import type { Sql } from '@sightline/postgres';
import { readStoredPerson, type PersonForDecide } from './flag-person-reads';

/** Carries "the persons or groups of project N changed" to every process that caches them. */
export interface PersonChangeChannel {
  publish(teamId: number): Promise<void>;
  /** `handler(null)` means "anything may have changed" (e.g. after a reconnect). */
  subscribe(handler: (teamId: number | null) => void): Promise<void>;
  close(): Promise<void>;
}

/** Redis pub/sub channel of person changes (the worker publishes, every api process listens). */
export const PERSON_CHANGES_CHANNEL = 'sightline:persons:changed';

/** What the worker calls once a run's person and group writes are committed. */
export interface PersonChangeNotifier {
  personsChanged(teamIds: Iterable<number>): Promise<void>;
}

export interface DecidePersonCache {
  /**
   * The stored person, static cohorts, hash-key overrides and requested groups behind a
   * distinct id, as readStoredPerson answers; `fresh` skips the cache (after this request
   * wrote hash-key overrides). The answer is shared: callers must not change it.
   */
  read(db: Sql, teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>, options?: { fresh?: boolean }): Promise<PersonForDecide>;
  /**
   * What read() would answer from the cache at once (a read that has completed, is within
   * maxAgeMs and was not overtaken by an announcement), else undefined: a caller can then skip
   * the deadline it puts on a store read. Shared like read()'s answer.
   */
  cached(teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>): PersonForDecide | undefined;
  /**
   * Tells every process's cache (this one included) that persons of the project changed outside
   * ingestion (the persons API); failures are reported through onError, the write stands.
   */
  announce(teamId: number): Promise<void>;
  /** Resolves once this process listens for change announcements. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface DecidePersonCacheOptions {
  channel: PersonChangeChannel;
  /**
   * Longest time an answer is reused (FLAGS_PERSON_CACHE_MS; 0: no cache). Bounds how late
   * decide sees writes nobody announces (person edits through the API, static cohorts,
   * another process's hash-key overrides, announcements lost while Redis was unreachable).
   */
  maxAgeMs: number;
  /** Most answers kept; the oldest go first. */
  maxEntries?: number;
  now?: () => number;
  onError?: (error: unknown, context: string) => void;
}

interface Entry {
  loaded: Promise<PersonForDecide>;
  /** The answer, once the read completed. */
  value?: PersonForDecide;
  loadedAt: number;
  generation: number;
}

/**
 * Decide reads the same few persons again and again (an SDK asks on every page load and
 * identify): answers are kept per process for at most maxAgeMs, and dropped for a whole
 * project when the worker announces it wrote persons or groups of it (Redis pub/sub between
 * processes, in-process in embedded mode), so an ingested `$set` reaches flags at once.
 * Concurrent requests for one key share one read; a read an announcement overtook is not
 * kept; failures are not kept.
 */
export function createDecidePersonCache(options: DecidePersonCacheOptions): DecidePersonCache {
  const maxEntries = options.maxEntries ?? 20_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const generations = new Map<number, number>();
  let globalGeneration = 0;
  const generationOf = (teamId: number) => globalGeneration + (generations.get(teamId) ?? 0);

  const ready = options.channel.subscribe((teamId) => {
    if (teamId === null) {
      globalGeneration++;
      entries.clear();
    } else generations.set(teamId, (generations.get(teamId) ?? 0) + 1);
  });
  ready.catch((error: unknown) => options.onError?.(error, 'subscribing to person change announcements'));

  const keyOf = (teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>) => {
    let key = `${teamId}\u0000${distinctId}`;
    for (const g of groups) key += `\u0000${g.index}\u0000${g.key}`;
    return key;
  };

  const usable = (entry: Entry | undefined, teamId: number, at: number): entry is Entry =>
    entry !== undefined && entry.generation === generationOf(teamId) && at - entry.loadedAt <= options.maxAgeMs;

  return {
    ready,
    cached(teamId, distinctId, groups) {
      if (options.maxAgeMs <= 0) return undefined;
      const entry = entries.get(keyOf(teamId, distinctId, groups));
      return usable(entry, teamId, now()) ? entry.value : undefined;
    },
    async read(db, teamId, distinctId, groups, readOptions = {}) {
      if (options.maxAgeMs <= 0) return readStoredPerson(db, teamId, distinctId, groups);
      const key = keyOf(teamId, distinctId, groups);
      const at = now();
      const generation = generationOf(teamId);
      const cached = entries.get(key);
      if (!readOptions.fresh && usable(cached, teamId, at)) return cached.loaded;
      const entry: Entry = { loaded: readStoredPerson(db, teamId, distinctId, groups), loadedAt: at, generation };
      entries.delete(key); // re-inserted last: Map order is the eviction order
      entries.set(key, entry);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
      entry.loaded.then(
        // An announcement that landed while this read ran makes its answer possibly stale.
        (value) => {
          if (generationOf(teamId) !== generation) {
            if (entries.get(key) === entry) entries.delete(key);
          } else entry.value = value;
        },
        () => {
          if (entries.get(key) === entry) entries.delete(key);
        },
      );
      return entry.loaded;
    },
    announce: (teamId) => options.channel.publish(teamId).catch((error: unknown) => options.onError?.(error, 'announcing a person change')),
    close: () => options.channel.close(),
  };
}

/** The worker's side: announces the projects whose persons or groups a committed run wrote. */
export function createPersonChangeNotifier(channel: Pick<PersonChangeChannel, 'publish'>, onError?: (error: unknown) => void): PersonChangeNotifier {
  return {
    async personsChanged(teamIds) {
      for (const teamId of new Set(teamIds)) {
        // The write is committed either way; caches catch up within their maxAgeMs.
        await channel.publish(teamId).catch((error: unknown) => onError?.(error));
      }
    },
  };
}
