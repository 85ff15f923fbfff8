import type { Sql } from '@sightline/postgres';
import { readProjectDistinctIds, readStoredPerson, readStoredPersons, type PersonForDecide, type StoredPersonRequest } from './flag-person-reads';

/**
 * What one write changed, for the caches that hold persons: the persons (uuids) whose
 * properties, distinct ids, static cohorts or hash keys changed or who were created, merged away
 * or deleted; the distinct ids that appeared or moved to another person; the groups written.
 * Without the lists, anything of the project may have changed (the persons API, static cohorts).
 */
export interface PersonChange {
  teamId: number;
  persons?: string[];
  distinctIds?: string[];
  groups?: Array<[index: number, key: string]>;
}

/** Carries person changes to every process that caches persons. */
export interface PersonChangeChannel {
  publish(change: PersonChange): Promise<void>;
  /** `handler(null)` means "anything may have changed" (e.g. after a reconnect). */
  subscribe(handler: (change: PersonChange | null) => void): Promise<void>;
  close(): Promise<void>;
}

/** Redis pub/sub channel of person changes (the worker publishes, every api process listens). */
export const PERSON_CHANGES_CHANNEL = 'sightline:persons:changed';

/**
 * Above this many ids a change travels through Redis as "anything of the project" (a few
 * hundred KB per worker batch to every api process would cost more than the re-reads it saves).
 */
const MOST_IDS_PER_MESSAGE = 5_000;

/**
 * How person changes travel through Redis: JSON, or a bare project id (the whole project, and
 * what processes of the previous release send). Anything else reads as "anything may have
 * changed".
 */
export const personChangeCodec = {
  encode(change: PersonChange): string {
    const ids = (change.persons?.length ?? 0) + (change.distinctIds?.length ?? 0) + (change.groups?.length ?? 0);
    return ids > MOST_IDS_PER_MESSAGE || !isTargeted(change) ? String(change.teamId) : JSON.stringify(change);
  },
  decode(text: string): PersonChange | null {
    if (/^\d+$/.test(text)) return { teamId: Number(text) };
    try {
      const parsed = JSON.parse(text) as Partial<PersonChange>;
      const strings = (xs: unknown) => Array.isArray(xs) && xs.every((x) => typeof x === 'string');
      const groups = (xs: unknown) => Array.isArray(xs) && xs.every((g) => Array.isArray(g) && typeof g[0] === 'number' && typeof g[1] === 'string');
      if (Number.isInteger(parsed.teamId) && strings(parsed.persons) && strings(parsed.distinctIds) && groups(parsed.groups)) return parsed as PersonChange;
    } catch {
      // fall through: unreadable
    }
    return null;
  },
};

const isTargeted = (change: PersonChange): change is Required<PersonChange> =>
  change.persons !== undefined && change.distinctIds !== undefined && change.groups !== undefined;

/** What the worker calls once a run's person and group writes are committed. */
export interface PersonChangeNotifier {
  personsChanged(changes: Iterable<PersonChange>): Promise<void>;
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
   * maxAgeMs and was not overtaken by an announcement, or a distinct id the project's list
   * proves has no person), else undefined: a caller can then skip the deadline it puts on a
   * store read. Shared like read()'s answer.
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
  /**
   * Most distinct ids held, over all projects, to prove an id has no person without a store
   * read (0: never; a project with more is read as before). Default 50,000.
   */
  mostKnownDistinctIds?: number;
  now?: () => number;
  onError?: (error: unknown, context: string) => void;
}

interface Entry {
  key: string;
  teamId: number;
  distinctId: string;
  groups: Array<{ index: number; key: string }>;
  loaded: Promise<PersonForDecide>;
  /** The answer, once the read completed. */
  value?: PersonForDecide;
  loadedAt: number;
  /**
   * From when a hit also reads the person again in the background: between half and four fifths
   * of maxAgeMs, drawn per answer, so answers loaded together (a burst of new visitors, a whole
   * project dropped) are not all read again in the same instant, and a person asked often never
   * waits for a store read.
   */
  refreshAt: number;
  refreshing?: boolean;
  /** The store the answer was read from, to read it again. */
  db: Sql;
  /** The project's whole-project generation when the read started. */
  generation: number;
  /** The project's count of changes of any kind when the read started. */
  changes: number;
}

/** A project with more distinct ids than the cache may hold is not listed again before this long. */
const TOO_MANY_IDS_RETRY_MS = 60_000;

/**
 * A project's distinct ids as the cache knows them: those the store had when the load started
 * plus every one announced since (a superset of the ids with a person, as long as no
 * announcement was lost), so an id missing from it has no person. Held at most maxAgeMs, the
 * bound on lost announcements, and listed again in the background before that.
 */
interface KnownDistinctIds {
  /** null while the first list is read, or when the project has too many. */
  ids: Set<string> | null;
  /** When the load of `ids` started. */
  loadedAt: number;
  refreshAt: number;
  /** The project's whole-project generation when that load started. */
  generation: number;
  /** Ids announced while a load runs, added to its list. */
  loading: string[] | null;
  /** Not listed again before then (the project has too many ids, or the last listing failed). */
  notBefore: number;
}

/** The answer for a distinct id without a person: nothing stored, only the requested groups. */
interface GroupsAnswer {
  answer: PersonForDecide;
  loadedAt: number;
  generation: number;
}

/** After a failed listing, the next is tried this much later (not on every miss). */
const LIST_RETRY_MS = 1_000;

const groupsKeyOf = (groups: Array<{ index: number; key: string }>) => {
  let key = '';
  for (const g of groups) key += `${g.index}\u0000${g.key}\u0000`;
  return key;
};
const noPerson = (groups: Map<number, Record<string, unknown>>): PersonForDecide => ({
  personUuid: null,
  properties: {},
  staticCohortIds: new Set(),
  hashKeyOverrides: {},
  groups,
});
/** Shared, as every answer of the cache: callers must not change it. */
const NO_PERSON = noPerson(new Map());

const sameJson = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
/** Whether two reads of one person answer the same (the store gives JSON keys in one order). */
function samePerson(a: PersonForDecide, b: PersonForDecide): boolean {
  if (a.personUuid !== b.personUuid || a.staticCohortIds.size !== b.staticCohortIds.size || a.groups.size !== b.groups.size) return false;
  for (const id of a.staticCohortIds) if (!b.staticCohortIds.has(id)) return false;
  for (const [index, properties] of a.groups) if (!sameJson(properties, b.groups.get(index))) return false;
  return sameJson(a.properties, b.properties) && sameJson(a.hashKeyOverrides, b.hashKeyOverrides);
}

/** Reads of one store a cache keeps in flight at once; misses beyond them wait and go together. */
const READS_IN_FLIGHT = 2;
/** How long a due refresh waits for others to share its read (nobody waits for a refresh). */
const REFRESH_GATHER_MS = 25;
/** Most requests in one batched read. */
const MOST_PER_READ = 500;

interface QueuedRead extends StoredPersonRequest {
  teamId: number;
  urgent: boolean;
  resolve: (value: PersonForDecide) => void;
  reject: (error: unknown) => void;
}

/**
 * The cache's reads of one store, batched: a miss is read at once while fewer than
 * READS_IN_FLIGHT reads are running, else it waits for one to finish and goes with every other
 * read queued meanwhile (a burst of new visitors costs a few statements, not one each); a
 * refresh (nobody waits for it) waits up to REFRESH_GATHER_MS for company. One statement per
 * project and batch (readStoredPersons).
 */
function createBatchedPersonReads(db: Sql) {
  let queued: QueuedRead[] = [];
  let inFlight = 0;
  let gatherTimer: ReturnType<typeof setTimeout> | undefined;
  let flushScheduled = false;

  const runBatch = async (teamId: number, batch: QueuedRead[]) => {
    inFlight++;
    try {
      const answers = await readStoredPersons(db, teamId, batch);
      batch.forEach((read, i) => read.resolve(answers[i]!));
    } catch (error) {
      for (const read of batch) read.reject(error);
    } finally {
      inFlight--;
      if (queued.some((r) => r.urgent)) scheduleFlush();
    }
  };
  const flush = () => {
    flushScheduled = false;
    if (gatherTimer) clearTimeout(gatherTimer);
    gatherTimer = undefined;
    const taken = queued;
    queued = [];
    const byTeam = new Map<number, QueuedRead[]>();
    for (const read of taken) {
      let reads = byTeam.get(read.teamId);
      if (!reads) byTeam.set(read.teamId, (reads = []));
      reads.push(read);
    }
    for (const [teamId, reads] of byTeam) for (let i = 0; i < reads.length; i += MOST_PER_READ) void runBatch(teamId, reads.slice(i, i + MOST_PER_READ));
  };
  /** On the next microtask: misses of the same tick share one read. */
  const scheduleFlush = () => {
    if (flushScheduled || inFlight >= READS_IN_FLIGHT) return;
    flushScheduled = true;
    queueMicrotask(flush);
  };

  return (teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>, urgent: boolean): Promise<PersonForDecide> =>
    new Promise((resolve, reject) => {
      queued.push({ teamId, distinctId, groups, urgent, resolve, reject });
      if (urgent) scheduleFlush();
      else if (!gatherTimer && !flushScheduled) gatherTimer = setTimeout(flush, REFRESH_GATHER_MS).unref();
    });
}

/**
 * Decide reads the same few persons again and again (an SDK asks on every page load and
 * identify): answers are kept per process for at most maxAgeMs. A write announced by the worker
 * (Redis pub/sub between processes, in-process in embedded mode) drops the answers it can have
 * changed: those of the persons it wrote (under every distinct id they were asked by), of the
 * distinct ids that appeared or moved, and of the groups it wrote; an announcement without lists
 * drops the whole project. So an ingested `$set` reaches flags at once, and a project that
 * ingests all the time keeps the answers of everyone else. Concurrent requests for one key share
 * one read; a read any change of its project overtook is not kept (it may predate the write and
 * its person is not known until it completes); failures are not kept.
 */
export function createDecidePersonCache(options: DecidePersonCacheOptions): DecidePersonCache {
  const maxEntries = options.maxEntries ?? 20_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  /** What can find an entry when a change names it: team + distinct id, person uuid or group → entry keys. */
  const byDistinctId = new Map<string, Set<string>>();
  const byPerson = new Map<string, Set<string>>();
  const byGroup = new Map<string, Set<string>>();
  const generations = new Map<number, number>();
  const changeCounts = new Map<number, number>();
  const mostKnownIds = options.mostKnownDistinctIds ?? 50_000;
  /** Per project, its distinct ids, in the order they were listed (the first go when too many are held). */
  const knownIds = new Map<number, KnownDistinctIds & { db: Sql }>();
  /** Per project and requested groups, the answer for an id without a person, from the reads kept. */
  const groupsAnswers = new Map<number, Map<string, GroupsAnswer>>();
  let globalGeneration = 0;
  const generationOf = (teamId: number) => globalGeneration + (generations.get(teamId) ?? 0);
  const changesOf = (teamId: number) => globalGeneration + (changeCounts.get(teamId) ?? 0);

  const indexKeysOf = (entry: Entry) => {
    const keys: Array<[Map<string, Set<string>>, string]> = [[byDistinctId, `${entry.teamId}\u0000${entry.distinctId}`]];
    for (const g of entry.groups) keys.push([byGroup, `${entry.teamId}\u0000${g.index}\u0000${g.key}`]);
    if (entry.value?.personUuid) keys.push([byPerson, `${entry.teamId}\u0000${entry.value.personUuid}`]);
    return keys;
  };
  const index = (entry: Entry) => {
    for (const [map, indexKey] of indexKeysOf(entry)) {
      let keys = map.get(indexKey);
      if (!keys) map.set(indexKey, (keys = new Set()));
      keys.add(entry.key);
    }
  };
  const remove = (entry: Entry) => {
    if (entries.get(entry.key) !== entry) return;
    entries.delete(entry.key);
    for (const [map, indexKey] of indexKeysOf(entry)) {
      const keys = map.get(indexKey);
      keys?.delete(entry.key);
      if (keys?.size === 0) map.delete(indexKey);
    }
  };
  const removeIndexed = (map: Map<string, Set<string>>, indexKey: string) => {
    for (const key of [...(map.get(indexKey) ?? [])]) {
      const entry = entries.get(key);
      if (entry) remove(entry);
    }
  };

  const ready = options.channel.subscribe((change) => {
    if (change === null) {
      globalGeneration++;
      entries.clear();
      knownIds.clear();
      groupsAnswers.clear();
      byDistinctId.clear();
      byPerson.clear();
      byGroup.clear();
      return;
    }
    const { teamId } = change;
    changeCounts.set(teamId, (changeCounts.get(teamId) ?? 0) + 1);
    if (!isTargeted(change)) {
      generations.set(teamId, (generations.get(teamId) ?? 0) + 1);
      return;
    }
    const known = knownIds.get(teamId);
    if (known && change.distinctIds.length > 0) addAnnouncedIds(teamId, known, change.distinctIds);
    if (change.groups.length > 0) groupsAnswers.delete(teamId);
    for (const uuid of change.persons) removeIndexed(byPerson, `${teamId}\u0000${uuid}`);
    for (const distinctId of change.distinctIds) removeIndexed(byDistinctId, `${teamId}\u0000${distinctId}`);
    for (const [groupIndex, key] of change.groups) removeIndexed(byGroup, `${teamId}\u0000${groupIndex}\u0000${key}`);
  });
  ready.catch((error: unknown) => options.onError?.(error, 'subscribing to person change announcements'));

  const readers = new WeakMap<Sql, ReturnType<typeof createBatchedPersonReads>>();
  const readBatched = (db: Sql, teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>, urgent: boolean) => {
    let reader = readers.get(db);
    if (!reader) readers.set(db, (reader = createBatchedPersonReads(db)));
    return reader(teamId, distinctId, groups, urgent);
  };

  const keyOf = (teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>) => {
    let key = `${teamId}\u0000${distinctId}`;
    for (const g of groups) key += `\u0000${g.index}\u0000${g.key}`;
    return key;
  };

  const heldBy = (known: KnownDistinctIds) => (known.ids?.size ?? 0) + (known.loading?.length ?? 0);
  /** Drops the lists listed longest ago (never `keep`) until the ids held over all projects fit mostKnownIds. */
  const dropListsBeyondBound = (keep: KnownDistinctIds) => {
    let held = 0;
    for (const other of knownIds.values()) held += heldBy(other);
    for (const [otherTeam, other] of knownIds) {
      if (held <= mostKnownIds) break;
      if (other === keep) continue;
      held -= heldBy(other);
      knownIds.delete(otherTeam);
    }
  };
  /**
   * Announced ids join the project's list (or the one loading), within the same bound as a
   * listing: a project whose announcements outgrow it is read from the store, as one listed with
   * too many ids, so a flood of new distinct ids cannot grow the list between listings.
   */
  const addAnnouncedIds = (teamId: number, known: KnownDistinctIds & { db: Sql }, distinctIds: string[]) => {
    for (const distinctId of distinctIds) {
      known.ids?.add(distinctId);
      known.loading?.push(distinctId);
    }
    if (heldBy(known) > mostKnownIds)
      // A new state: a listing in flight sees it is no longer the project's and drops its answer.
      knownIds.set(teamId, { db: known.db, ids: null, loadedAt: 0, refreshAt: 0, generation: -1, loading: null, notBefore: now() + TOO_MANY_IDS_RETRY_MS });
    else dropListsBeyondBound(known);
  };
  /**
   * Lists the project's distinct ids in the background when it has no usable list or its list
   * is due for a refresh (nobody waits for it); announcements that land meanwhile are added.
   */
  const listKnownIds = (db: Sql, teamId: number, at: number) => {
    if (mostKnownIds <= 0) return;
    let known = knownIds.get(teamId);
    if (known && (known.loading !== null || at < known.notBefore)) return;
    if (known?.ids && known.generation === generationOf(teamId) && at < known.refreshAt) return;
    if (!known) knownIds.set(teamId, (known = { db, ids: null, loadedAt: 0, refreshAt: 0, generation: -1, loading: null, notBefore: 0 }));
    const state = known;
    const generation = generationOf(teamId);
    state.loading = [];
    readProjectDistinctIds(db, teamId, mostKnownIds).then(
      (ids) => {
        const announced = state.loading ?? [];
        state.loading = null;
        // A whole-project change may have added ids this list predates.
        if (knownIds.get(teamId) !== state || generationOf(teamId) !== generation) return;
        if (ids === null) {
          state.ids = null;
          state.notBefore = now() + TOO_MANY_IDS_RETRY_MS;
          return;
        }
        state.ids = new Set(ids);
        for (const id of announced) state.ids.add(id);
        Object.assign(state, { db, loadedAt: at, refreshAt: at + options.maxAgeMs * (0.5 + 0.3 * Math.random()), generation });
        knownIds.delete(teamId);
        knownIds.set(teamId, state);
        dropListsBeyondBound(state);
      },
      (error: unknown) => {
        state.loading = null;
        state.notBefore = now() + LIST_RETRY_MS;
        options.onError?.(error, "listing a project's distinct ids");
      },
    );
  };
  /** The answer for a distinct id the project's list proves has no person, when its groups are known; else undefined. */
  const answerWithoutPerson = (teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>, at: number) => {
    const known = knownIds.get(teamId);
    if (!known?.ids || known.generation !== generationOf(teamId) || at - known.loadedAt > options.maxAgeMs || known.ids.has(distinctId)) return undefined;
    if (at >= known.refreshAt) listKnownIds(known.db, teamId, at);
    if (groups.length === 0) return NO_PERSON;
    const answer = groupsAnswers.get(teamId)?.get(groupsKeyOf(groups));
    return answer && answer.generation === generationOf(teamId) && at - answer.loadedAt <= options.maxAgeMs ? answer.answer : undefined;
  };
  /** A kept read's groups answer every id without a person that asks for the same groups. */
  const keepGroupsAnswer = (entry: Entry, value: PersonForDecide) => {
    if (entry.groups.length === 0 || mostKnownIds <= 0) return;
    let answers = groupsAnswers.get(entry.teamId);
    if (!answers) groupsAnswers.set(entry.teamId, (answers = new Map()));
    const key = groupsKeyOf(entry.groups);
    const kept = answers.get(key);
    if (kept && kept.generation === entry.generation && kept.loadedAt >= entry.loadedAt) return;
    answers.delete(key);
    answers.set(key, { answer: noPerson(value.groups), loadedAt: entry.loadedAt, generation: entry.generation });
    if (answers.size > maxEntries) answers.delete(answers.keys().next().value!);
  };

  const usable = (entry: Entry | undefined, teamId: number, at: number): entry is Entry =>
    entry !== undefined && entry.generation === generationOf(teamId) && at - entry.loadedAt <= options.maxAgeMs;

  const startRead = (
    db: Sql,
    key: string,
    teamId: number,
    distinctId: string,
    groups: Array<{ index: number; key: string }>,
    at: number,
    urgent: boolean,
  ): Entry => ({
    key,
    teamId,
    distinctId,
    groups,
    db,
    loaded: readBatched(db, teamId, distinctId, groups, urgent),
    loadedAt: at,
    refreshAt: at + options.maxAgeMs * (0.5 + 0.3 * Math.random()),
    generation: generationOf(teamId),
    changes: changesOf(teamId),
  });
  /** Re-inserted last: Map order is the eviction order. */
  const insert = (entry: Entry) => {
    const previous = entries.get(entry.key);
    if (previous) remove(previous);
    entries.set(entry.key, entry);
    index(entry);
    if (entries.size > maxEntries) remove(entries.values().next().value!);
  };
  /**
   * A hit past its refresh time is answered from the cache and reads the person again beside
   * it; the new answer replaces the old only if nothing dropped or replaced the old one and no
   * change of the project overtook the read. The old answer is never served past maxAgeMs.
   */
  const refreshIfDue = (entry: Entry, at: number) => {
    if (entry.refreshing || at < entry.refreshAt) return;
    entry.refreshing = true;
    const next = startRead(entry.db, entry.key, entry.teamId, entry.distinctId, entry.groups, at, false);
    next.loaded.then(
      (value) => {
        entry.refreshing = false;
        if (entries.get(entry.key) !== entry || changesOf(entry.teamId) !== next.changes) return;
        // Unchanged: the same answer object, so what callers keep per answer (decide's reused evaluations) stays.
        next.value = entry.value !== undefined && samePerson(entry.value, value) ? entry.value : value;
        insert(next);
        keepGroupsAnswer(next, value);
      },
      () => (entry.refreshing = false), // a later hit tries again; the old answer ages out as before
    );
  };

  return {
    ready,
    cached(teamId, distinctId, groups) {
      if (options.maxAgeMs <= 0) return undefined;
      const entry = entries.get(keyOf(teamId, distinctId, groups));
      const at = now();
      if (usable(entry, teamId, at) && entry.value !== undefined) {
        refreshIfDue(entry, at);
        return entry.value;
      }
      return answerWithoutPerson(teamId, distinctId, groups, at);
    },
    async read(db, teamId, distinctId, groups, readOptions = {}) {
      if (options.maxAgeMs <= 0) return readStoredPerson(db, teamId, distinctId, groups);
      const key = keyOf(teamId, distinctId, groups);
      const at = now();
      const cached = entries.get(key);
      if (!readOptions.fresh && usable(cached, teamId, at)) {
        if (cached.value !== undefined) refreshIfDue(cached, at);
        return cached.loaded;
      }
      if (!readOptions.fresh) {
        const withoutPerson = answerWithoutPerson(teamId, distinctId, groups, at);
        if (withoutPerson) return withoutPerson;
      }
      listKnownIds(db, teamId, at);
      const entry = startRead(db, key, teamId, distinctId, groups, at, true);
      insert(entry);
      entry.loaded.then(
        (value) => {
          if (entries.get(key) !== entry) return;
          // A change that landed while this read ran may postdate what it read.
          if (changesOf(teamId) !== entry.changes) return remove(entry);
          entry.value = value;
          if (value.personUuid) index(entry); // now findable by its person too
          keepGroupsAnswer(entry, value);
        },
        () => remove(entry),
      );
      return entry.loaded;
    },
    announce: (teamId) => options.channel.publish({ teamId }).catch((error: unknown) => options.onError?.(error, 'announcing a person change')),
    close: () => options.channel.close(),
  };
}

/** The worker's side: announces what a committed run's person and group writes changed, per project. */
export function createPersonChangeNotifier(channel: Pick<PersonChangeChannel, 'publish'>, onError?: (error: unknown) => void): PersonChangeNotifier {
  return {
    async personsChanged(changes) {
      for (const change of changes) {
        // The write is committed either way; caches catch up within their maxAgeMs.
        await channel.publish(change).catch((error: unknown) => onError?.(error));
      }
    },
  };
}
