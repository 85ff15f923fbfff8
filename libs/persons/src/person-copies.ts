import { insertJsonRows, insertRowBinary, type ClickHouseClient, type RowBinaryWriter } from '@sightline/clickhouse';
import type { PersonChange } from './decide-person-cache';
import { KeptByProject } from './kept-by-project';

/** A row of ClickHouse `person`: a versioned copy of the Postgres person (read with argMax(…, version)). */
export interface PersonCopy {
  id: string;
  team_id: number;
  created_at: string;
  properties: string;
  is_identified: 0 | 1;
  is_deleted: 0 | 1;
  version: number;
}

/** A row of ClickHouse `person_distinct_id2`. */
export interface PersonDistinctIdCopy {
  team_id: number;
  distinct_id: string;
  person_id: string;
  is_deleted: 0 | 1;
  version: number;
}

/** A row of ClickHouse `groups`. */
export interface GroupCopy {
  team_id: number;
  group_type_index: number;
  group_key: string;
  created_at: string;
  group_properties: string;
  version: number;
}

/**
 * Writes the copies, one batched insert per table. Rows repeat harmlessly: every table is a
 * ReplacingMergeTree(version), and a copy is only ever written with its Postgres version.
 */
export async function writeCopies(
  ch: ClickHouseClient,
  copies: { persons?: PersonCopy[]; distinctIds?: PersonDistinctIdCopy[]; groups?: GroupCopy[] },
): Promise<void> {
  await Promise.all([
    insertRowBinary(ch, 'person', PERSON_COLUMNS, copies.persons ?? [], writePersonCopy),
    insertRowBinary(ch, 'person_distinct_id2', DISTINCT_ID_COLUMNS, copies.distinctIds ?? [], writeDistinctIdCopy),
    insertJsonRows(ch, 'groups', copies.groups ?? []),
  ]);
}

// The copies as RowBinary, in the tables' column types (libs/clickhouse/migrations/0001_events.sql):
// the properties JSON goes in as it is, where a JSON body escapes it inside a JSON string and
// ClickHouse unescapes it again (the person copies are most of the worker's copy bytes).
const PERSON_COLUMNS = ['id', 'created_at', 'team_id', 'properties', 'is_identified', 'is_deleted', 'version'] as const;
const DISTINCT_ID_COLUMNS = ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version'] as const;

function writePersonCopy(w: RowBinaryWriter, c: PersonCopy): void {
  w.uuid(c.id);
  w.dateTime64(Date.parse(c.created_at), 3);
  w.int64(c.team_id);
  w.string(c.properties);
  w.int8(c.is_identified);
  w.int8(c.is_deleted);
  w.int64(c.version); // UInt64: a version is never negative, so its bytes are the Int64's
}

function writeDistinctIdCopy(w: RowBinaryWriter, c: PersonDistinctIdCopy): void {
  w.int64(c.team_id);
  w.string(c.distinct_id);
  w.uuid(c.person_id);
  w.int8(c.is_deleted);
  w.int64(c.version);
}

/** What was written of a copy: its version, negative (−version − 1) when it was a deletion. */
const personMark = (c: { is_deleted: 0 | 1; version: number }) => (c.is_deleted ? -c.version - 1 : c.version);

interface DistinctIdMark {
  mark: number;
  personId: string;
}

/**
 * The person and distinct-id copies this process has written to ClickHouse, by key and
 * version, so a batch that touches a person without changing it skips rewriting the same row.
 * A copy is remembered only once its insert succeeded: a batch redelivered after a failed
 * write, or after a crash (the memory is gone), still writes every copy it touches. A copy
 * is a function of its key and version (every change to a person or distinct id row bumps
 * its version), so an equal (key, version) is the same row. Bounded (see KeptByProject).
 * Kept per project by the copy's own key (no key text built per copy: a run checks and
 * records every copy it makes).
 */
export class WrittenCopies {
  private readonly persons: KeptByProject<number>;
  private readonly distinctIds: KeptByProject<DistinctIdMark>;
  constructor(capacity = 500_000) {
    this.persons = new KeptByProject(capacity);
    this.distinctIds = new KeptByProject(capacity);
  }

  private personWritten(c: PersonCopy): boolean {
    return this.persons.get(c.team_id, c.id) === personMark(c);
  }

  private distinctIdWritten(c: PersonDistinctIdCopy): boolean {
    const written = this.distinctIds.get(c.team_id, c.distinct_id);
    return written !== undefined && written.mark === personMark(c) && written.personId === c.person_id;
  }

  /** The copies not known to be written already. */
  unwritten(copies: { persons: PersonCopy[]; distinctIds: PersonDistinctIdCopy[] }): { persons: PersonCopy[]; distinctIds: PersonDistinctIdCopy[] } {
    return {
      persons: copies.persons.filter((c) => !this.personWritten(c)),
      distinctIds: copies.distinctIds.filter((c) => !this.distinctIdWritten(c)),
    };
  }

  /** Remembers copies whose insert succeeded. */
  record(copies: { persons: PersonCopy[]; distinctIds: PersonDistinctIdCopy[] }): void {
    for (const c of copies.persons) this.persons.set(c.team_id, c.id, personMark(c));
    for (const c of copies.distinctIds) this.distinctIds.set(c.team_id, c.distinct_id, { mark: personMark(c), personId: c.person_id });
  }
}

/**
 * What a run's copies say changed, per project, for decide's person caches: every copy mirrors
 * a PostgreSQL write, so the persons, distinct ids and groups copied are all that changed.
 */
export function personChangesOf(copies: { persons: PersonCopy[]; distinctIds: PersonDistinctIdCopy[]; groups: GroupCopy[] }): PersonChange[] {
  const byTeam = new Map<number, { persons: Set<string>; distinctIds: Set<string>; groups: Map<string, [number, string]> }>();
  const of = (teamId: number) => {
    let change = byTeam.get(teamId);
    if (!change) byTeam.set(teamId, (change = { persons: new Set(), distinctIds: new Set(), groups: new Map() }));
    return change;
  };
  for (const p of copies.persons) of(p.team_id).persons.add(p.id);
  for (const d of copies.distinctIds) {
    const change = of(d.team_id);
    change.distinctIds.add(d.distinct_id);
    change.persons.add(d.person_id); // the person it joined (or left) has one id more (or fewer)
  }
  for (const g of copies.groups) of(g.team_id).groups.set(`${g.group_type_index}\u0000${g.group_key}`, [g.group_type_index, g.group_key]);
  return [...byTeam].map(([teamId, c]) => ({ teamId, persons: [...c.persons], distinctIds: [...c.distinctIds], groups: [...c.groups.values()] }));
}
