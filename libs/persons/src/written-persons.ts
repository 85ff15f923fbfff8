import { KeptByProject } from './kept-by-project';
import type { PropertyUpdateTimes } from './property-update-times';
import type { Properties } from './property-updates';

/**
 * A person as PostgreSQL held it when a run of this process committed: the row read or written,
 * at its version. Never changed once kept (a run that uses it copies what it changes).
 */
export interface WrittenPerson {
  readonly id: string;
  readonly uuid: string;
  readonly properties: Properties;
  /** JSON of `properties`, when the run had it. */
  readonly propertiesJson: string | undefined;
  readonly updateTimes: PropertyUpdateTimes;
  readonly isIdentified: boolean;
  readonly version: number;
  readonly createdAtMs: number;
}

/** A distinct id's row as kept: its person and the row's version. */
export interface WrittenDistinctId {
  readonly person: WrittenPerson;
  readonly version: number;
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
 * person its ids leave, a deletion removes it).
 *
 * Bounded like the written copies: at most `capacity` distinct ids in two generations, at least
 * the last `capacity / 2` remembered.
 */
export class WrittenPersons {
  private readonly distinctIds: KeptByProject<WrittenDistinctId>;
  constructor(capacity = 200_000) {
    this.distinctIds = new KeptByProject(capacity);
  }

  get(teamId: number, distinctId: string): WrittenDistinctId | undefined {
    return this.distinctIds.get(teamId, distinctId);
  }

  /** Keeps a distinct id's person, unless a higher version of it is kept already (a later run committed first). */
  remember(teamId: number, distinctId: string, entry: WrittenDistinctId): void {
    const kept = this.distinctIds.get(teamId, distinctId);
    if (kept !== undefined && kept.person.id === entry.person.id && kept.person.version > entry.person.version) return;
    this.distinctIds.set(teamId, distinctId, entry);
  }

  forget(teamId: number, distinctId: string): void {
    this.distinctIds.delete(teamId, distinctId);
  }

  /** Distinct ids held (what the bound limits). */
  get size(): number {
    return this.distinctIds.heldKeys;
  }
}
