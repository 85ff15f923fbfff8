import { insertJsonRows, type ClickHouseClient } from '@sightline/clickhouse';
import type { PersonChange } from './decide-person-cache';

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
    insertJsonRows(ch, 'person', copies.persons ?? []),
    insertJsonRows(ch, 'person_distinct_id2', copies.distinctIds ?? []),
    insertJsonRows(ch, 'groups', copies.groups ?? []),
  ]);
}

/**
 * The person and distinct-id copies this process has written to ClickHouse, by key and
 * version, so a batch that touches a person without changing it skips rewriting the same row.
 * A copy is remembered only once its insert succeeded: a batch redelivered after a failed
 * write, or after a crash (the memory is gone), still writes every copy it touches. A copy
 * is a function of its key and version (every change to a person or distinct id row bumps
 * its version), so an equal (key, version) is the same row. Bounded: the oldest are forgotten.
 */
export class WrittenCopies {
  private readonly written = new Map<string, string>();
  constructor(private readonly capacity = 500_000) {}

  private static personKey = (c: PersonCopy) => `p\u0000${c.team_id}\u0000${c.id}`;
  private static personValue = (c: PersonCopy) => `${c.version}\u0000${c.is_deleted}`;
  private static distinctIdKey = (c: PersonDistinctIdCopy) => `d\u0000${c.team_id}\u0000${c.distinct_id}`;
  private static distinctIdValue = (c: PersonDistinctIdCopy) => `${c.version}\u0000${c.is_deleted}\u0000${c.person_id}`;

  /** The copies not known to be written already. */
  unwritten(copies: { persons: PersonCopy[]; distinctIds: PersonDistinctIdCopy[] }): { persons: PersonCopy[]; distinctIds: PersonDistinctIdCopy[] } {
    return {
      persons: copies.persons.filter((c) => this.written.get(WrittenCopies.personKey(c)) !== WrittenCopies.personValue(c)),
      distinctIds: copies.distinctIds.filter((c) => this.written.get(WrittenCopies.distinctIdKey(c)) !== WrittenCopies.distinctIdValue(c)),
    };
  }

  /** Remembers copies whose insert succeeded. */
  record(copies: { persons: PersonCopy[]; distinctIds: PersonDistinctIdCopy[] }): void {
    for (const c of copies.persons) this.remember(WrittenCopies.personKey(c), WrittenCopies.personValue(c));
    for (const c of copies.distinctIds) this.remember(WrittenCopies.distinctIdKey(c), WrittenCopies.distinctIdValue(c));
  }

  private remember(key: string, value: string): void {
    // Re-inserted at the end, so the oldest entry is the least recently written.
    this.written.delete(key);
    this.written.set(key, value);
    if (this.written.size > this.capacity) this.written.delete(this.written.keys().next().value!);
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
