import { KeptInOrder } from './kept-in-order';
import type { PropertyUpdateTimes } from './property-update-times';
import type { Properties } from './property-updates';

/**
 * A distinct id's person as PostgreSQL held it when a run of this process committed: the row read
 * or written, at its version, and the distinct id's own row version. Never changed once kept (a
 * run that uses it copies what it changes); the ids of one person share its properties.
 */
export interface WrittenPerson {
  readonly id: string;
  readonly uuid: string;
  readonly properties: Properties;
  /** JSON of `properties`, when the run had it. */
  readonly propertiesJson: string | undefined;
  /** NO_UPDATE_TIMES when the person has none (most: only imported history has them). */
  readonly updateTimes: PropertyUpdateTimes;
  readonly isIdentified: boolean;
  readonly version: number;
  readonly createdAtMs: number;
  /** The version of the distinct id's row (person_distinct_ids.version). */
  readonly distinctIdVersion: number;
}

/**
 * The persons this worker process's runs last committed, by distinct id, so that the next run
 * of those ids can skip reading them (docs/data-model.md, "How the worker writes persons"). A
 * kept person is only a claim: the run that uses it writes a changed person only where its
 * version is still the kept one, and checks the version of one it does not change, in the same
 * statement; any other writer in between (a merge, an API edit or split, a deletion, another
 * worker process) has moved the version or removed the row, and the run is worked out again from
 * a read. That is enough for the distinct ids too: every change to a distinct id's row changes
 * its person's version or deletes the person (a merge bumps both persons, a split bumps the
 * person its ids leave, a deletion removes it). A kept person older than what PostgreSQL holds
 * (runs of one person committing out of order) costs a read, never a lost change.
 *
 * Bounded: at most `capacity` distinct ids, the one kept longest ago forgotten first; and at most
 * `maxBytes` of memory by estimate (keptBytes), since person properties have no size limit of
 * their own: whoever holds a project token can send big `$set`s for many distinct ids. A person
 * whose properties JSON is longer than MOST_KEPT_PROPERTIES_CHARS, or not at hand, is not kept;
 * past `maxBytes` everything is forgotten at once (forgetting only costs reads).
 */
export class WrittenPersons {
  private distinctIds: KeptInOrder<WrittenPerson>;
  /** Estimated bytes of the persons held (keptBytes of each). */
  private bytes = 0;
  constructor(
    private readonly capacity = 200_000,
    private readonly maxBytes = 128 * 1024 * 1024,
  ) {
    this.distinctIds = this.emptyMemory();
  }

  get(teamId: number, distinctId: string): WrittenPerson | undefined {
    return this.distinctIds.get(teamId, distinctId);
  }

  remember(teamId: number, distinctId: string, person: WrittenPerson): void {
    const bytes = keptBytes(person);
    if (bytes === undefined) return this.forget(teamId, distinctId);
    const previous = this.distinctIds.get(teamId, distinctId);
    if (previous !== undefined) this.bytes -= keptBytes(previous)!;
    this.distinctIds.set(teamId, distinctId, person);
    this.bytes += bytes;
    if (this.bytes > this.maxBytes) {
      this.distinctIds = this.emptyMemory();
      this.bytes = 0;
    }
  }

  forget(teamId: number, distinctId: string): void {
    const previous = this.distinctIds.get(teamId, distinctId);
    if (previous === undefined) return;
    this.bytes -= keptBytes(previous)!;
    this.distinctIds.delete(teamId, distinctId);
  }

  /** Estimated bytes held (what maxBytes limits). */
  get heldBytes(): number {
    return this.bytes;
  }

  private emptyMemory(): KeptInOrder<WrittenPerson> {
    return new KeptInOrder<WrittenPerson>(this.capacity, (forgotten) => (this.bytes -= keptBytes(forgotten)!));
  }

  /** Distinct ids held (what the bound limits). */
  get size(): number {
    return this.distinctIds.size;
  }
}

/** Longest properties JSON of a person kept (longer ones are read again: rare, and big). */
export const MOST_KEPT_PROPERTIES_CHARS = 64 * 1024;
/** What a kept person costs beside its properties: the record, its ids and the map entry. */
const KEPT_PERSON_OVERHEAD_BYTES = 512;

/**
 * A kept person's memory by estimate: its properties JSON (up to 2 bytes a character) and the
 * parsed properties (about as much again), or undefined when it is not to be kept.
 */
function keptBytes(person: WrittenPerson): number | undefined {
  const json = person.propertiesJson;
  if (json === undefined || json.length > MOST_KEPT_PROPERTIES_CHARS) return undefined;
  return 4 * json.length + KEPT_PERSON_OVERHEAD_BYTES;
}
