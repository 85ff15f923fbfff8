import { personUuidFor } from '@sightline/ingestion';
import type { Sql } from '@sightline/postgres';
import { isIllegalDistinctId } from './illegal-distinct-ids';
import { applyHistoricalUpdates, applyLiveUpdates, emptyUpdateTimes, NO_UPDATE_TIMES, type PropertyUpdateTimes } from './property-update-times';
import type { Properties, PropertyUpdates } from './property-updates';
import type { PersonCopy, PersonDistinctIdCopy } from './person-copies';
import type { WrittenPerson, WrittenPersons } from './written-persons';

/** One person as the batch sees it: loaded from Postgres (id set) or created in this batch. */
export interface PersonState {
  teamId: number;
  /** Postgres id; null until the batch inserts it. */
  id: string | null;
  uuid: string;
  properties: Properties;
  /** Event times of the historical updates behind its properties (docs/data-model.md#person-properties); NO_UPDATE_TIMES (frozen) until there are any. */
  updateTimes: PropertyUpdateTimes;
  isIdentified: boolean;
  /** The version the next write carries; strictly above every version written before. */
  version: number;
  /** The version read from PostgreSQL (null when created in this batch): the update asserts it is still there. */
  storedVersion: number | null;
  /**
   * Taken from the process's written persons instead of read: storedVersion is only what this
   * process last committed, so the write checks it even when the batch does not change the person.
   */
  remembered: boolean;
  createdAtMs: number;
  /** createdAtMs moved earlier (a merge) since the person was loaded: the update writes it. */
  createdAtChanged: boolean;
  /** Stored version + 1 has been claimed for this batch's write. */
  bumped: boolean;
  dirty: boolean;
  /** Merged into another person during this batch. */
  deleted: boolean;
  /** A full-mode event touched it, so its ClickHouse copy is (re)written. */
  touched: boolean;
  /** Distinct ids this batch adds to the person, with their row version. */
  newDistinctIds: Map<string, number>;
  /** Cached JSON of `properties` (cleared on change): enrichment serialises it once per change. */
  propertiesJson?: string;
}

/** What a person starts from when the batch first meets it: read, kept by the process, or created. */
type StartingPerson = Pick<
  PersonState,
  'teamId' | 'id' | 'uuid' | 'properties' | 'updateTimes' | 'isIdentified' | 'version' | 'storedVersion' | 'remembered' | 'createdAtMs' | 'propertiesJson'
>;

/**
 * A person's state in the batch, every field written in one order (one object shape for all
 * three origins). A created person is already changed and touched, and its first version claimed.
 */
function personState(start: StartingPerson, { created = false } = {}): PersonState {
  return {
    teamId: start.teamId,
    id: start.id,
    uuid: start.uuid,
    properties: start.properties,
    updateTimes: start.updateTimes,
    isIdentified: start.isIdentified,
    version: start.version,
    storedVersion: start.storedVersion,
    remembered: start.remembered,
    createdAtMs: start.createdAtMs,
    createdAtChanged: false,
    bumped: created,
    dirty: created,
    deleted: false,
    touched: created,
    newDistinctIds: new Map(),
    propertiesJson: start.propertiesJson,
  };
}

export type MergeKind = '$identify' | '$create_alias' | '$merge_dangerously';

/** What a merge request did; the non-merges are counted as ingestion warnings by the caller. */
export type MergeOutcome =
  | 'same_id'
  | 'illegal_id'
  | 'created'
  | 'linked'
  | 'already_merged'
  | 'merged'
  /** The other person is identified and the event is not $merge_dangerously. */
  | 'refused_already_identified';

interface DistinctIdEntry {
  /** As the event or the read gave it (the batch's key also holds the project). */
  distinctId: string;
  person: PersonState;
  version: number;
}

interface PendingMerge {
  into: PersonState;
  other: PersonState;
}

export interface PersonBatchCopies {
  persons: PersonCopy[];
  distinctIds: PersonDistinctIdCopy[];
}

/**
 * A person this batch read without locks was changed or deleted by another writer before the
 * batch wrote it back (PostHog's ASSERT_VERSION person writes, plugin-server
 * src/worker/ingestion/persons/batch-writing-person-store.ts). The transaction must be rolled
 * back and the batch worked out again from a fresh read. Carries SQLSTATE 40001
 * (serialization_failure), so a caller that does not handle it retries the run as a lost race.
 */
export class PersonVersionRace extends Error {
  readonly code = '40001';
  constructor(readonly persons: number) {
    super(`${persons} person(s) changed by another writer since they were read`);
    this.name = 'PersonVersionRace';
  }
}

const entryKey = (teamId: number, distinctId: string) => `${teamId}\u0000${distinctId}`;

const hasUpdateTimes = (times: PropertyUpdateTimes) => {
  for (const _ in times.updatedAt) return true;
  for (const _ in times.operation) return true;
  return false;
};

/** JSON of an object, without a call into the serialiser for an empty one (most persons' update times). */
function objectJson(value: object): string {
  for (const _ in value) return JSON.stringify(value);
  return '{}';
}

/**
 * Distinct ids this process knows are recorded in personless_distinct_ids (rows are never
 * removed), so repeated personless events of an id skip the lookup and the insert. Bounded:
 * the oldest entries are forgotten first. Each also keeps the id's person uuid once asked for
 * it: every personless event of an id without a person carries that uuid, and the SHA-1 and
 * text behind it cost more than the lookup.
 *
 * Held per project, keyed by the distinct id string itself: a string made per lookup
 * (project and id joined) would be allocated, flattened and hashed on every event, where the
 * id parsed from the message is hashed once and that hash kept on the string.
 */
export class PersonlessDistinctIdCache {
  /** Per project: distinct id → its person uuid, '' until first asked for. */
  private readonly known = new Map<number, Map<string, string>>();
  /** Insertion order, a ring of `capacity` slots: the next entry to forget is at `oldest`. */
  private readonly orderTeams: number[] = [];
  private readonly orderIds: string[] = [];
  private oldest = 0;
  private size = 0;
  constructor(private readonly capacity = 200_000) {}

  has(teamId: number, distinctId: string): boolean {
    return this.known.get(teamId)?.has(distinctId) ?? false;
  }

  /** `personUuid`: personUuidFor(teamId, distinctId) when the caller has it already. */
  add(teamId: number, distinctId: string, personUuid = ''): void {
    let ids = this.known.get(teamId);
    if (!ids) this.known.set(teamId, (ids = new Map()));
    if (ids.has(distinctId)) return;
    ids.set(distinctId, personUuid);
    if (this.size === this.capacity) {
      this.known.get(this.orderTeams[this.oldest]!)!.delete(this.orderIds[this.oldest]!);
      this.orderTeams[this.oldest] = teamId;
      this.orderIds[this.oldest] = distinctId;
      this.oldest = (this.oldest + 1) % this.capacity;
    } else {
      this.orderTeams.push(teamId);
      this.orderIds.push(distinctId);
      this.size++;
    }
  }

  /** personUuidFor(teamId, distinctId), remembered for ids the cache knows. */
  personUuid(teamId: number, distinctId: string): string {
    return this.knownPersonUuid(teamId, distinctId) ?? personUuidFor(teamId, distinctId);
  }

  /** The person uuid of an id the cache knows (worked out once, then remembered); undefined for an unknown id. */
  knownPersonUuid(teamId: number, distinctId: string): string | undefined {
    const ids = this.known.get(teamId);
    const known = ids?.get(distinctId);
    if (known === undefined || known !== '') return known;
    const uuid = personUuidFor(teamId, distinctId);
    // Setting a key already there keeps its place (the eviction order is the ring's anyway).
    ids!.set(distinctId, uuid);
    return uuid;
  }
}

/**
 * One loaded distinct id and its person, as a JSON array: [distinct_id, distinct id version,
 * person id, uuid, properties, is_identified, version, created_at in epoch milliseconds,
 * properties_last_updated_at, properties_last_operation].
 */
type LoadedRow = [
  string,
  number,
  string,
  string,
  Properties | null,
  boolean,
  number,
  number,
  Record<string, string> | null,
  PropertyUpdateTimes['operation'] | null,
];

/**
 * The update times of a merged person: each property keeps the times of the side its value
 * comes from (the surviving person's on a clash, as for the values), so a live value stays live.
 */
function mergedUpdateTimes(into: PersonState, other: PersonState): PropertyUpdateTimes {
  const times: PropertyUpdateTimes = { updatedAt: { ...other.updateTimes.updatedAt }, operation: { ...other.updateTimes.operation } };
  for (const key of Object.keys(into.properties)) {
    delete times.updatedAt[key];
    delete times.operation[key];
  }
  Object.assign(times.updatedAt, into.updateTimes.updatedAt);
  Object.assign(times.operation, into.updateTimes.operation);
  return times;
}

/**
 * The distinct ids of a batch that the written persons hold, and the rest, to read. A person
 * kept at two versions (its ids committed by different runs) is read.
 */
function splitRemembered(remembered: WrittenPersons, teamId: number, distinctIds: string[]): { toRead: string[]; kept: [string, WrittenPerson][] } {
  const toRead: string[] = [];
  let kept: [string, WrittenPerson][] = [];
  let versions: Map<string, number> | undefined;
  let stale: Set<string> | undefined;
  for (const distinctId of distinctIds) {
    const entry = remembered.get(teamId, distinctId);
    if (entry === undefined) {
      toRead.push(distinctId);
      continue;
    }
    kept.push([distinctId, entry]);
    const seen = (versions ??= new Map()).get(entry.id);
    if (seen === undefined) versions.set(entry.id, entry.version);
    else if (seen !== entry.version) (stale ??= new Set()).add(entry.id);
  }
  if (stale) {
    for (const [distinctId, entry] of kept) if (stale.has(entry.id)) toRead.push(distinctId);
    kept = kept.filter(([, entry]) => !stale.has(entry.id));
  }
  return { toRead, kept };
}

/**
 * The persons of one consumed batch, worked on in memory in event order and written back
 * to Postgres in one transaction with a handful of bulk statements (instead of one round
 * trip per event). Load locks the persons (FOR UPDATE) so a concurrent batch touching the
 * same person (a merge across partitions) waits instead of losing an update.
 */
export class PersonBatch {
  private readonly byDistinctId = new Map<string, DistinctIdEntry>();
  private readonly personsById = new Map<string, PersonState>();
  private readonly created: PersonState[] = [];
  private readonly merges: PendingMerge[] = [];
  /** Distinct ids seen on personless events before they had a person (docs/data-model.md#personless-events). */
  private readonly personlessSeen = new Set<string>();
  /** Keyed by entryKey; each with the person uuid worked out for its event, which the personless cache keeps. */
  private readonly personlessToRecord = new Map<string, { teamId: number; distinctId: string; personUuid: string }>();
  /**
   * Versions of deleted persons (by uuid) and distinct ids (docs/data-model.md#deleting-persons):
   * a person created again from the same distinct id gets the same uuid, and its copies must
   * outrank the deletion rows in ClickHouse.
   */
  private readonly deletedPersonVersions = new Map<string, number>();
  private readonly deletedDistinctIdVersions = new Map<string, number>();
  /** The person uuid of each id the deletion versions were looked up for (keyed by entryKey): worked out once. */
  private readonly newPersonUuids = new Map<string, string>();

  private constructor(private readonly personlessCache?: PersonlessDistinctIdCache) {}

  /**
   * Loads (and, with `lock`, locks) the persons of the given distinct ids, per team.
   * `mayCreate` names the ids a person may be created for or linked to in this batch (those of
   * person-processing events and merges; default: all): only for them are the personless
   * sightings and deletion versions read, which a new person row needs. An id seen only on
   * personless events needs just its person, if it has one.
   */
  static async load(
    sql: Sql,
    distinctIdsByTeam: ReadonlyMap<number, Iterable<string>>,
    options: {
      lock: boolean;
      personlessCache?: PersonlessDistinctIdCache;
      mayCreate?: (teamId: number, distinctId: string) => boolean;
      /** Persons this process committed last: their ids are not read (only for an unlocked batch; see WrittenPersons). */
      remembered?: WrittenPersons;
    },
  ): Promise<PersonBatch> {
    const batch = new PersonBatch(options.personlessCache);
    for (const [teamId, ids] of distinctIdsByTeam) {
      // The caller's sets are used as they are (no second set built of thousands of ids).
      const distinctIds = ids instanceof Set ? [...(ids as Set<string>)] : [...new Set(ids)];
      if (distinctIds.length === 0) continue;
      const { toRead, kept } = options.remembered ? splitRemembered(options.remembered, teamId, distinctIds) : { toRead: distinctIds, kept: [] };
      if (toRead.length > 0) await batch.read(sql, teamId, toRead, options.lock);
      for (const [distinctId, person] of kept) batch.useRemembered(teamId, distinctId, person);
      // mayCreate first: ids of personless events only (most, in a personless run) need no key made.
      const missing = distinctIds.filter((id) => (options.mayCreate?.(teamId, id) ?? true) && !batch.byDistinctId.has(entryKey(teamId, id)));
      if (missing.length > 0) await batch.loadNewPersonVersions(sql, teamId, missing);
    }
    return batch;
  }

  /** Reads (and, with `lock`, locks) the persons of these distinct ids. */
  private async read(sql: Sql, teamId: number, distinctIds: string[], lock: boolean): Promise<void> {
    // All rows as one JSON document: the embedded PGlite pays per row returned (each is a
    // protocol message decoded in JavaScript), which for thousands of rows is most of the load.
    const [{ rows: json } = { rows: null }] = await sql.query<{ rows: string | null }>(
      `SELECT json_agg(json_build_array(distinct_id, distinct_id_version, id::text, uuid, properties, is_identified, version,
                                        floor(extract(epoch FROM created_at) * 1000), properties_last_updated_at, properties_last_operation))::text AS rows
         FROM (SELECT d.distinct_id, d.version AS distinct_id_version, p.id, p.uuid, p.properties, p.is_identified, p.version, p.created_at,
                      p.properties_last_updated_at, p.properties_last_operation
                 FROM json_array_elements_text($2::json) AS wanted(distinct_id)
                 JOIN person_distinct_ids d ON d.team_id = $1 AND d.distinct_id = wanted.distinct_id
                 JOIN persons p ON p.id = d.person_id
                ORDER BY p.id${lock ? '\n                    FOR UPDATE OF p' : ''}) AS loaded`,
      // The ids as one JSON array: JSON.stringify is native, where a text[] parameter is
      // escaped element by element in JavaScript (thousands of ids per batch).
      [teamId, JSON.stringify(distinctIds)],
    );
    const rows: LoadedRow[] = json === null ? [] : JSON.parse(json);
    for (const [distinctId, distinctIdVersion, id, uuid, properties, isIdentified, version, createdAtMs, updatedAt, operation] of rows) {
      let person = this.personsById.get(id);
      if (!person) {
        person = personState({
          teamId,
          id,
          uuid,
          properties: properties ?? {},
          updateTimes: { updatedAt: updatedAt ?? {}, operation: operation ?? {} },
          isIdentified,
          version,
          storedVersion: version,
          remembered: false,
          createdAtMs,
          propertiesJson: undefined,
        });
        this.personsById.set(id, person);
      }
      this.byDistinctId.set(entryKey(teamId, distinctId), { distinctId, person, version: distinctIdVersion });
    }
  }

  /**
   * A distinct id's person as this process last committed it, instead of a read. What the batch
   * changes is copied first: the kept person is shared with other runs. When the batch also read
   * the person (through another id) at another version, the kept one is stale: the batch is
   * worked out again from a read.
   */
  private useRemembered(teamId: number, distinctId: string, kept: WrittenPerson): void {
    let person = this.personsById.get(kept.id);
    if (person && person.storedVersion !== kept.version) throw new PersonVersionRace(1);
    if (!person) {
      person = personState({
        teamId,
        id: kept.id,
        uuid: kept.uuid,
        properties: { ...kept.properties },
        updateTimes:
          kept.updateTimes === NO_UPDATE_TIMES
            ? NO_UPDATE_TIMES
            : { updatedAt: { ...kept.updateTimes.updatedAt }, operation: { ...kept.updateTimes.operation } },
        isIdentified: kept.isIdentified,
        version: kept.version,
        storedVersion: kept.version,
        remembered: true,
        createdAtMs: kept.createdAtMs,
        propertiesJson: kept.propertiesJson,
      });
      this.personsById.set(kept.id, person);
    }
    this.byDistinctId.set(entryKey(teamId, distinctId), { distinctId, person, version: kept.distinctIdVersion });
  }

  /**
   * Keeps every stored person of the batch as it now is in PostgreSQL, by distinct id. Call only
   * once the batch's transaction committed, and not for a batch that merged persons (a merge
   * moves distinct ids this batch never saw).
   */
  rememberIn(remembered: WrittenPersons): void {
    for (const entry of this.byDistinctId.values()) {
      const person = entry.person;
      if (person.id === null || person.deleted || person.dirty) continue;
      const times = person.updateTimes;
      remembered.remember(person.teamId, entry.distinctId, {
        id: person.id,
        uuid: person.uuid,
        properties: person.properties,
        propertiesJson: person.propertiesJson,
        updateTimes: hasUpdateTimes(times) ? times : NO_UPDATE_TIMES,
        isIdentified: person.isIdentified,
        version: person.version,
        createdAtMs: person.createdAtMs,
        distinctIdVersion: entry.version,
      });
    }
  }

  /**
   * What a person row created for these distinct ids starts from, in one round trip: whether
   * the id was seen on personless events (then its first row is version 1) and the versions
   * its deleted person and distinct id were written with. Ids the personless cache knows skip
   * the personless lookup.
   */
  private async loadNewPersonVersions(sql: Sql, teamId: number, distinctIds: string[]): Promise<void> {
    const unknownPersonless = distinctIds.filter((id) => {
      if (!this.personlessCache?.has(teamId, id)) return true;
      this.personlessSeen.add(entryKey(teamId, id));
      return false;
    });
    const rows = await sql.query<{ kind: 'personless' | 'person' | 'distinct_id'; key: string; version: string }>(
      `SELECT 'personless' AS kind, p.distinct_id AS key, 0::bigint AS version
         FROM json_array_elements_text($2::json) AS wanted(distinct_id)
         JOIN personless_distinct_ids p ON p.team_id = $1 AND p.distinct_id = wanted.distinct_id
       UNION ALL
       SELECT 'person', d.uuid::text, d.version
         FROM json_array_elements_text($3::json) AS wanted(uuid)
         JOIN deleted_person_versions d ON d.team_id = $1 AND d.uuid = wanted.uuid::uuid
       UNION ALL
       SELECT 'distinct_id', d.distinct_id, d.version
         FROM json_array_elements_text($4::json) AS wanted(distinct_id)
         JOIN deleted_distinct_id_versions d ON d.team_id = $1 AND d.distinct_id = wanted.distinct_id`,
      // JSON arrays rather than text[]/uuid[] parameters, as in load.
      [teamId, JSON.stringify(unknownPersonless), JSON.stringify(distinctIds.map((id) => this.newPersonUuid(teamId, id))), JSON.stringify(distinctIds)],
    );
    for (const row of rows) {
      const key = entryKey(teamId, row.key);
      if (row.kind === 'personless') this.personlessSeen.add(key);
      else if (row.kind === 'person') this.deletedPersonVersions.set(key, Number(row.version));
      else this.deletedDistinctIdVersions.set(key, Number(row.version));
    }
  }

  /** The person of a distinct id, if it has one (read only). */
  find(teamId: number, distinctId: string): PersonState | undefined {
    return this.byDistinctId.get(entryKey(teamId, distinctId))?.person;
  }

  /** UUIDv5 of "team:distinct_id", remembered for the person getOrCreate may make of it. */
  private newPersonUuid(teamId: number, distinctId: string): string {
    const uuid = personUuidFor(teamId, distinctId);
    this.newPersonUuids.set(entryKey(teamId, distinctId), uuid);
    return uuid;
  }

  /** The person of a distinct id, created on first sight (UUIDv5 of "team:distinct_id"). */
  getOrCreate(teamId: number, distinctId: string, timestampMs: number): PersonState {
    const key = entryKey(teamId, distinctId);
    const existing = this.byDistinctId.get(key)?.person;
    if (existing) {
      existing.touched = true;
      return existing;
    }
    const uuid = this.newPersonUuids.get(key) ?? personUuidFor(teamId, distinctId);
    const deletedVersion = this.deletedPersonVersions.size === 0 ? undefined : this.deletedPersonVersions.get(entryKey(teamId, uuid));
    const person = personState(
      {
        teamId,
        id: null,
        uuid,
        properties: {},
        updateTimes: NO_UPDATE_TIMES,
        isIdentified: false,
        version: deletedVersion === undefined ? 0 : deletedVersion + 1,
        storedVersion: null,
        remembered: false,
        createdAtMs: timestampMs,
        propertiesJson: undefined,
      },
      { created: true },
    );
    this.created.push(person);
    this.addDistinctId(person, distinctId, key);
    return person;
  }

  /**
   * Applies $set_once, $set, $unset; returns whether the person changed. A historical event's
   * (`historicalTimeMs`, its time) are applied by event time, a live event's as they come
   * (docs/data-model.md#person-properties).
   */
  updateProperties(person: PersonState, updates: PropertyUpdates, historicalTimeMs: number | null = null): boolean {
    if (historicalTimeMs !== null && person.updateTimes === NO_UPDATE_TIMES) person.updateTimes = emptyUpdateTimes();
    const changed =
      historicalTimeMs === null
        ? applyLiveUpdates(person.properties, person.updateTimes, updates)
        : applyHistoricalUpdates(person.properties, person.updateTimes, updates, historicalTimeMs);
    if (!changed) return false;
    this.markChanged(person);
    return true;
  }

  /**
   * Links `otherDistinctId` to the person of `intoDistinctId` (PostHog: person-merge-service.ts mergeDistinctIds; docs/data-model.md#person-merges).
   * The person of `intoDistinctId` survives; its properties win on conflicts.
   */
  merge(teamId: number, intoDistinctId: string, otherDistinctId: string, kind: MergeKind, timestampMs: number): MergeOutcome {
    if (intoDistinctId === otherDistinctId) return 'same_id';
    if (isIllegalDistinctId(intoDistinctId) || isIllegalDistinctId(otherDistinctId)) return 'illegal_id';
    const into = this.find(teamId, intoDistinctId);
    const other = this.find(teamId, otherDistinctId);
    if (!into && !other) {
      const person = this.getOrCreate(teamId, intoDistinctId, timestampMs);
      this.addDistinctId(person, otherDistinctId);
      person.isIdentified = true;
      return 'created';
    }
    if (!into || !other) {
      const person = (into ?? other)!;
      person.touched = true;
      this.addDistinctId(person, into ? otherDistinctId : intoDistinctId);
      this.identify(person);
      return 'linked';
    }
    into.touched = true;
    other.touched = true;
    if (into === other) {
      this.identify(into);
      return 'already_merged';
    }
    if (other.isIdentified && kind !== '$merge_dangerously') return 'refused_already_identified';

    // version = max(into, other) + 1 over the stored versions; the deleted copy of `other`
    // also outranks every row written for it before.
    const nextVersion = (p: PersonState) => (p.bumped ? p.version : p.version + 1);
    const otherNext = nextVersion(other);
    into.version = Math.max(nextVersion(into), otherNext);
    other.version = otherNext;
    into.bumped = other.bumped = true;
    into.updateTimes = mergedUpdateTimes(into, other);
    into.properties = { ...other.properties, ...into.properties };
    if (other.createdAtMs < into.createdAtMs) {
      into.createdAtMs = other.createdAtMs;
      into.createdAtChanged = true;
    }
    into.isIdentified = true;
    this.markChanged(into);
    this.markChanged(other);
    other.deleted = true;
    for (const entry of this.byDistinctId.values()) if (entry.person === other) entry.person = into;
    for (const [distinctId, version] of other.newDistinctIds) into.newDistinctIds.set(distinctId, version);
    other.newDistinctIds.clear();
    if (other.id !== null) this.merges.push({ into, other });
    return 'merged';
  }

  /** Marks a person identified ($identify / alias), writing only when it was not yet. */
  identify(person: PersonState): void {
    person.touched = true;
    if (person.isIdentified) return;
    person.isIdentified = true;
    this.markChanged(person);
  }

  /**
   * A personless event's person: its distinct id's, if it has one; otherwise the uuid its person
   * would get, and the id is remembered as personless, so that a later person for it gets a
   * version-1 row. An id the personless cache knows is answered without making its batch key.
   */
  personOfPersonlessEvent(teamId: number, distinctId: string): PersonState | string {
    // A run of personless events whose ids have no person loads none: then no key is made per event.
    if (this.byDistinctId.size > 0) {
      const existing = this.byDistinctId.get(entryKey(teamId, distinctId))?.person;
      if (existing) return existing;
    }
    const cached = this.personlessCache?.knownPersonUuid(teamId, distinctId);
    if (cached !== undefined) return cached;
    const key = entryKey(teamId, distinctId);
    const toRecord = this.personlessToRecord.get(key);
    if (toRecord) return toRecord.personUuid;
    const personUuid = personUuidFor(teamId, distinctId);
    if (!this.personlessSeen.has(key)) this.personlessToRecord.set(key, { teamId, distinctId, personUuid });
    return personUuid;
  }

  /** JSON of the person's properties now (cached until the next change). */
  propertiesJson(person: PersonState): string {
    return (person.propertiesJson ??= JSON.stringify(person.properties));
  }

  /** Writes every change to Postgres (inside the caller's transaction) and returns the ClickHouse copies. */
  async flush(sql: Sql): Promise<PersonBatchCopies> {
    const newDistinctIds = await this.writePersonsAndDistinctIds(sql);
    const movedDistinctIds = await this.markMergedPersonlessAndMerge(sql, newDistinctIds);
    if (this.personlessToRecord.size > 0) {
      const rows = [...this.personlessToRecord.values()];
      await sql.query(
        `INSERT INTO personless_distinct_ids (team_id, distinct_id)
         SELECT * FROM unnest($1::int[], $2::text[]) ON CONFLICT DO NOTHING`,
        [rows.map((r) => r.teamId), rows.map((r) => r.distinctId)],
      );
      for (const r of rows) this.personlessCache?.add(r.teamId, r.distinctId, r.personUuid);
    }
    return this.copies(movedDistinctIds);
  }

  private addDistinctId(person: PersonState, distinctId: string, key = entryKey(person.teamId, distinctId)): void {
    // After a personless event, the first person row of that id is version 1 (docs/data-model.md#personless-events).
    const deletedVersion = this.deletedDistinctIdVersions.get(key);
    const version = deletedVersion !== undefined ? deletedVersion + 1 : this.personlessSeen.has(key) || this.personlessToRecord.has(key) ? 1 : 0;
    this.personlessToRecord.delete(key);
    person.newDistinctIds.set(distinctId, version);
    this.byDistinctId.set(key, { distinctId, person, version });
  }

  private markChanged(person: PersonState): void {
    person.touched = true;
    person.dirty = true;
    person.propertiesJson = undefined;
    if (!person.bumped) {
      person.version += 1;
      person.bumped = true;
    }
  }

  /**
   * The batch's person and distinct-id writes as one statement: the persons it created, every
   * distinct id it added (a new person's by the uuid the insert answers with, so both go in
   * together), and the loaded persons it changed. In: three JSON parameters (one native
   * JSON.stringify or string join each, no per-element escaping in JavaScript); out: the new
   * persons' ids as one JSON text and the count of changed persons written.
   *
   * A changed person is written only if its version is still the one read; a batch that read
   * without locks learns here that another writer got in between (PersonVersionRace), and
   * nothing of the statement is kept.
   */
  private async writePersonsAndDistinctIds(sql: Sql): Promise<{ teamId: number; distinctId: string; version: number }[]> {
    const created = this.created.filter((p) => !p.deleted);
    // In id order, as the locked read takes its locks: two batches updating the same persons
    // then lock them in the same order and cannot deadlock.
    const changed = [...this.personsById.values()]
      .filter((p) => p.dirty && !p.deleted)
      .sort((a, b) => a.id!.length - b.id!.length || (a.id! < b.id! ? -1 : a.id! > b.id! ? 1 : 0));
    const distinctIds: { teamId: number; distinctId: string; personId: string | null; personUuid: string | null; version: number }[] = [];
    /**
     * Persons taken from the written persons that no update below checks (left as they were, or
     * merged away: the merge deletes them by id): [id, version kept].
     */
    const unchangedRemembered: string[] = [];
    for (const list of this.allPersons())
      for (const person of list) {
        if (person.remembered && (!person.dirty || person.deleted)) unchangedRemembered.push(`[${person.id},${person.storedVersion}]`);
        if (person.deleted) continue;
        for (const [distinctId, version] of person.newDistinctIds)
          distinctIds.push({ teamId: person.teamId, distinctId, personId: person.id, personUuid: person.id === null ? person.uuid : null, version });
      }
    if (created.length === 0 && changed.length === 0 && distinctIds.length === 0 && unchangedRemembered.length === 0) return [];
    // Created: [team_id, uuid, properties, is_identified, version, created_at ms, update times,
    // operations]. Changed: [id, properties, is_identified, version, created_at ms or null (set
    // only when a merge moved it), update times, operations, version read]. The properties go
    // in as they are (no second encoding).
    const createdRows = created.map(
      (p) =>
        `[${p.teamId},"${p.uuid}",${this.propertiesJson(p)},${p.isIdentified},${p.version},${p.createdAtMs},${objectJson(p.updateTimes.updatedAt)},${objectJson(p.updateTimes.operation)}]`,
    );
    const changedRows = changed.map(
      (p) =>
        `[${p.id},${this.propertiesJson(p)},${p.isIdentified},${p.version},${p.createdAtChanged ? p.createdAtMs : 'null'},${objectJson(p.updateTimes.updatedAt)},${objectJson(p.updateTimes.operation)},${p.storedVersion}]`,
    );
    const [{ ids, updated, unchanged } = { ids: null, updated: 0, unchanged: 0 }] = await sql.query<{ ids: string | null; updated: number; unchanged: number }>(
      `WITH created AS (
         INSERT INTO persons (team_id, uuid, properties, is_identified, version, created_at, properties_last_updated_at, properties_last_operation)
         SELECT (x.value ->> 0)::int, (x.value ->> 1)::uuid, x.value -> 2, (x.value ->> 3)::boolean, (x.value ->> 4)::bigint,
                to_timestamp((x.value ->> 5)::double precision / 1000), x.value -> 6, x.value -> 7
           FROM jsonb_array_elements($1::text::jsonb) AS x
         RETURNING id, team_id, uuid),
       linked AS (
         INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version)
         SELECT d."teamId", d."distinctId", coalesce(d."personId", c.id), d.version
           FROM json_to_recordset($2::json) AS d("teamId" int, "distinctId" text, "personId" bigint, "personUuid" uuid, version bigint)
           LEFT JOIN created c ON c.team_id = d."teamId" AND c.uuid = d."personUuid"),
       updated AS (
         UPDATE persons SET properties = x.value -> 1, is_identified = (x.value ->> 2)::boolean, version = (x.value ->> 3)::bigint,
                created_at = coalesce(to_timestamp((x.value ->> 4)::double precision / 1000), persons.created_at),
                properties_last_updated_at = x.value -> 5, properties_last_operation = x.value -> 6
           FROM jsonb_array_elements($3::text::jsonb) AS x
          WHERE persons.id = (x.value ->> 0)::bigint AND persons.version = (x.value ->> 7)::bigint
         RETURNING 1)
       SELECT (SELECT json_agg(json_build_array(id::text, team_id, uuid))::text FROM created) AS ids, (SELECT count(*)::int FROM updated) AS updated,
              (SELECT count(*)::int FROM persons, jsonb_array_elements($4::text::jsonb) AS x
                WHERE persons.id = (x.value ->> 0)::bigint AND persons.version = (x.value ->> 1)::bigint) AS unchanged`,
      [`[${createdRows.join(',')}]`, JSON.stringify(distinctIds), `[${changedRows.join(',')}]`, `[${unchangedRemembered.join(',')}]`],
    );
    const missed = changed.length - Number(updated) + unchangedRemembered.length - Number(unchanged);
    if (missed > 0) throw new PersonVersionRace(missed);
    const byUuid = new Map(created.map((p) => [`${p.teamId}:${p.uuid}`, p]));
    for (const [id, teamId, uuid] of (ids === null ? [] : JSON.parse(ids)) as [string, number, string][]) {
      const person = byUuid.get(`${teamId}:${uuid}`)!;
      person.id = id;
      person.dirty = false;
    }
    for (const person of changed) person.dirty = false;
    return distinctIds;
  }

  /**
   * After the writes: the personless ids that now have a person are marked merged, and each
   * merge of two stored persons moves the other person's distinct ids (including ids this batch
   * never saw), hash-key overrides and cohort rows to the survivor before deleting it.
   */
  private async markMergedPersonlessAndMerge(
    sql: Sql,
    inserts: readonly { teamId: number; distinctId: string; version: number }[],
  ): Promise<PersonDistinctIdCopy[]> {
    const fromPersonless = inserts.filter((r) => r.version === 1);
    if (fromPersonless.length > 0) {
      await sql.query(
        `UPDATE personless_distinct_ids SET is_merged = true
          WHERE (team_id, distinct_id) IN (SELECT * FROM unnest($1::int[], $2::text[]))`,
        [fromPersonless.map((r) => r.teamId), fromPersonless.map((r) => r.distinctId)],
      );
    }
    const moved: PersonDistinctIdCopy[] = [];
    for (const { into, other } of this.merges) {
      // Every distinct id of the other person, including ids this batch never saw.
      const rows = await sql.query<{ distinct_id: string; version: string }>(
        `UPDATE person_distinct_ids SET person_id = $1, version = version + 1 WHERE person_id = $2
         RETURNING distinct_id, version`,
        [into.id, other.id],
      );
      for (const row of rows)
        moved.push({ team_id: into.teamId, distinct_id: row.distinct_id, person_id: into.uuid, is_deleted: 0, version: Number(row.version) });
      await sql.query(
        `INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key)
         SELECT team_id, $1, feature_flag_key, hash_key FROM feature_flag_hash_key_overrides WHERE team_id = $3 AND person_id = $2
         ON CONFLICT DO NOTHING`,
        [into.id, other.id, into.teamId],
      );
      await sql.query(
        `INSERT INTO cohort_people (cohort_id, person_id, version)
         SELECT cohort_id, $1, version FROM cohort_people WHERE person_id = $2 ON CONFLICT DO NOTHING`,
        [into.id, other.id],
      );
      // Cascades to the other person's remaining overrides and cohort rows.
      await sql.query('DELETE FROM persons WHERE id = $1', [other.id]);
    }
    return moved;
  }

  /**
   * Copies of every person and distinct id a full-mode event touched, changed or not: a
   * batch redelivered after a crash between the Postgres commit and the ClickHouse insert
   * then still writes the copies (equal versions collapse in ReplacingMergeTree).
   */
  private copies(moved: PersonDistinctIdCopy[]): PersonBatchCopies {
    const persons: PersonCopy[] = [];
    for (const list of this.allPersons())
      for (const person of list) {
        if (!person.touched || (person.deleted && person.id === null)) continue;
        persons.push({
          id: person.uuid,
          team_id: person.teamId,
          created_at: new Date(person.createdAtMs).toISOString(),
          properties: person.deleted ? '{}' : this.propertiesJson(person),
          is_identified: person.isIdentified ? 1 : 0,
          is_deleted: person.deleted ? 1 : 0,
          version: person.version,
        });
      }
    const distinctIds: PersonDistinctIdCopy[] = [];
    for (const entry of this.byDistinctId.values()) {
      if (!entry.person.touched || entry.person.deleted) continue;
      distinctIds.push({ team_id: entry.person.teamId, distinct_id: entry.distinctId, person_id: entry.person.uuid, is_deleted: 0, version: entry.version });
    }
    if (moved.length === 0) return { persons, distinctIds };
    // A merge's moved rows replace what the batch knew of those ids.
    const byKey = new Map(distinctIds.map((row) => [entryKey(row.team_id, row.distinct_id), row]));
    for (const row of moved) byKey.set(entryKey(row.team_id, row.distinct_id), row);
    return { persons, distinctIds: [...byKey.values()] };
  }

  /** Every person of the batch once, in two lists: those loaded or kept, then those it created (never among the loaded). */
  private allPersons(): Iterable<PersonState>[] {
    return [this.personsById.values(), this.created];
  }
}
