import { KeptByProject } from './kept-by-project';
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

/** Shared by every kept person without update times: a kept person is never changed. */
export const NO_UPDATE_TIMES: PropertyUpdateTimes = Object.freeze({ updatedAt: Object.freeze({}), operation: Object.freeze({}) }) as PropertyUpdateTimes;

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
 * Bounded like the written copies: at most `capacity` distinct ids in two generations, at least
 * the last `capacity / 2` remembered.
 */
export class WrittenPersons {
  private readonly distinctIds: KeptByProject<WrittenPerson>;
  constructor(capacity = 200_000) {
    this.distinctIds = new KeptByProject(capacity);
  }

  get(teamId: number, distinctId: string): WrittenPerson | undefined {
    return this.distinctIds.get(teamId, distinctId);
  }

  remember(teamId: number, distinctId: string, person: WrittenPerson): void {
    this.distinctIds.set(teamId, distinctId, person);
  }

  forget(teamId: number, distinctId: string): void {
    this.distinctIds.delete(teamId, distinctId);
  }

  /** Distinct ids held (what the bound limits). */
  get size(): number {
    return this.distinctIds.heldKeys;
  }
}
