import type { MetadataStore, Sql } from '@sightline/postgres';
import { applyPropertyUpdates, type Properties } from './property-updates';
import type { GroupCopy } from './person-copies';

/** PostHog allows five group types per project (indexes 0–4). */
export const MAX_GROUP_TYPES = 5;

/**
 * Group type → index per project; the first-seen type takes the next free index. A mapping
 * never changes once made, so hits are cached for the life of the process.
 */
export class GroupTypeIndexes {
  private readonly cache = new Map<string, number>();
  constructor(private readonly db: MetadataStore) {}

  /** The index of a group type, assigned on first sight; null when the project has five already. */
  async resolve(teamId: number, groupType: string): Promise<number | null> {
    const key = `${teamId}\u0000${groupType}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    // Two workers may race for the same free index: the loser's insert does nothing and it looks again.
    for (let attempt = 0; attempt < MAX_GROUP_TYPES + 1; attempt++) {
      const found = await this.db.query<{ group_type_index: number }>(
        'SELECT group_type_index FROM group_type_mappings WHERE team_id = $1 AND group_type = $2',
        [teamId, groupType],
      );
      if (found.length > 0) {
        this.cache.set(key, Number(found[0]!.group_type_index));
        return Number(found[0]!.group_type_index);
      }
      const inserted = await this.db.query<{ group_type_index: number }>(
        `INSERT INTO group_type_mappings (team_id, group_type, group_type_index)
         SELECT $1, $2, n FROM generate_series(0, ${MAX_GROUP_TYPES - 1}) AS n
          WHERE n NOT IN (SELECT group_type_index FROM group_type_mappings WHERE team_id = $1)
          ORDER BY n LIMIT 1
         ON CONFLICT DO NOTHING
         RETURNING group_type_index`,
        [teamId, groupType],
      );
      if (inserted.length > 0) {
        this.cache.set(key, Number(inserted[0]!.group_type_index));
        return Number(inserted[0]!.group_type_index);
      }
      const count = await this.db.query<{ n: string }>('SELECT count(*) AS n FROM group_type_mappings WHERE team_id = $1', [teamId]);
      if (Number(count[0]!.n) >= MAX_GROUP_TYPES) return null;
    }
    throw new Error(`group type ${groupType}: could not assign an index (concurrent writers)`);
  }
}

export interface GroupState {
  teamId: number;
  groupTypeIndex: number;
  groupKey: string;
  properties: Properties;
  version: number;
  createdAtMs: number;
  dirty: boolean;
  /** Stored version + 1 has been claimed for this batch's write (new groups start at 0). */
  bumped: boolean;
  /** A $groupidentify named it, so its ClickHouse copy is (re)written. */
  touched: boolean;
  propertiesJson?: string;
}

export interface GroupRef {
  teamId: number;
  groupTypeIndex: number;
  groupKey: string;
}

const groupKey = (r: GroupRef) => `${r.teamId}\u0000${r.groupTypeIndex}\u0000${r.groupKey}`;

/** The groups of one batch: loaded together, updated in event order, written back in bulk. */
export class GroupBatch {
  private readonly groups = new Map<string, GroupState>();
  private constructor() {}

  static async load(sql: Sql, refs: readonly GroupRef[], options: { lock: boolean }): Promise<GroupBatch> {
    const batch = new GroupBatch();
    const unique = [...new Map(refs.map((r) => [groupKey(r), r])).values()];
    if (unique.length === 0) return batch;
    const rows = await sql.query<{
      team_id: number;
      group_type_index: number;
      group_key: string;
      group_properties: Properties;
      version: string;
      created_at: Date | string;
    }>(
      `SELECT g.team_id, g.group_type_index, g.group_key, g.group_properties, g.version, g.created_at
         FROM groups g JOIN unnest($1::int[], $2::smallint[], $3::text[]) AS r(t, i, k)
           ON g.team_id = r.t AND g.group_type_index = r.i AND g.group_key = r.k
        ORDER BY g.team_id, g.group_type_index, g.group_key${options.lock ? ' FOR UPDATE OF g' : ''}`,
      [unique.map((r) => r.teamId), unique.map((r) => r.groupTypeIndex), unique.map((r) => r.groupKey)],
    );
    for (const row of rows) {
      const ref = { teamId: Number(row.team_id), groupTypeIndex: Number(row.group_type_index), groupKey: row.group_key };
      batch.groups.set(groupKey(ref), {
        ...ref,
        properties: row.group_properties ?? {},
        version: Number(row.version),
        createdAtMs: new Date(row.created_at).getTime(),
        dirty: false,
        bumped: false,
        touched: false,
      });
    }
    return batch;
  }

  get(ref: GroupRef): GroupState | undefined {
    return this.groups.get(groupKey(ref));
  }

  /** $groupidentify: creates the group or merges `$group_set` into it (set semantics). */
  identify(ref: GroupRef, groupSet: Properties, timestampMs: number): GroupState {
    let group = this.get(ref);
    if (!group) {
      group = { ...ref, properties: {}, version: 0, createdAtMs: timestampMs, dirty: true, bumped: true, touched: true };
      this.groups.set(groupKey(ref), group);
    }
    group.touched = true;
    if (applyPropertyUpdates(group.properties, { set: groupSet, setOnce: {}, unset: [] })) {
      group.dirty = true;
      group.propertiesJson = undefined;
      if (!group.bumped) {
        group.version += 1;
        group.bumped = true;
      }
    }
    return group;
  }

  propertiesJson(group: GroupState): string {
    return (group.propertiesJson ??= JSON.stringify(group.properties));
  }

  /**
   * Upserts changed groups (inside the caller's transaction) and returns the ClickHouse copies
   * of every identified group, changed or not (a redelivered batch rewrites a lost copy).
   */
  async flush(sql: Sql): Promise<GroupCopy[]> {
    const changed = [...this.groups.values()].filter((g) => g.dirty);
    if (changed.length > 0)
      await sql.query(
        `INSERT INTO groups (team_id, group_type_index, group_key, group_properties, version, created_at)
       SELECT t, i, k, p::jsonb, v, c FROM unnest($1::int[], $2::smallint[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[]) AS x(t, i, k, p, v, c)
       ON CONFLICT (team_id, group_type_index, group_key)
       DO UPDATE SET group_properties = excluded.group_properties, version = excluded.version`,
        [
          changed.map((g) => g.teamId),
          changed.map((g) => g.groupTypeIndex),
          changed.map((g) => g.groupKey),
          changed.map((g) => this.propertiesJson(g)),
          changed.map((g) => g.version),
          changed.map((g) => new Date(g.createdAtMs).toISOString()),
        ],
      );
    return [...this.groups.values()]
      .filter((g) => g.touched)
      .map((g) => ({
        team_id: g.teamId,
        group_type_index: g.groupTypeIndex,
        group_key: g.groupKey,
        created_at: new Date(g.createdAtMs).toISOString(),
        group_properties: this.propertiesJson(g),
        version: g.version,
      }));
  }
}
