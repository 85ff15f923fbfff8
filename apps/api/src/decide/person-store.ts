import { withDeadline } from '@sightline/deadline';
import type { Sql } from '@sightline/postgres';

/** What flag evaluation reads about one person and the request's groups (PostHog: rust/feature-flags/src/flags/flag_matching.rs; docs/flags.md). */
export interface StoredPerson {
  properties: Record<string, unknown>;
  staticCohortIds: Set<number>;
  hashKeyOverrides: Record<string, string>;
  /** Group type index → stored group properties, for the requested groups that exist. */
  groups: Map<number, Record<string, unknown>>;
}

/**
 * One round trip for everything decide reads per request: the person behind the distinct
 * id (or nothing), its static cohorts and hash-key overrides, and the requested groups.
 */
export async function readStoredPerson(db: Sql, teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>): Promise<StoredPerson> {
  const rows = await db.query<{
    properties: Record<string, unknown> | null;
    cohort_ids: number[] | null;
    overrides: Record<string, string> | null;
    groups: Record<string, Record<string, unknown>> | null;
  }>(
    `SELECT p.properties,
            ARRAY(SELECT c.cohort_id FROM cohort_people c WHERE c.person_id = p.id) AS cohort_ids,
            (SELECT jsonb_object_agg(h.feature_flag_key, h.hash_key)
               FROM feature_flag_hash_key_overrides h WHERE h.team_id = $1 AND h.person_id = p.id) AS overrides,
            (SELECT jsonb_object_agg(g.group_type_index::text, g.group_properties)
               FROM groups g JOIN unnest($3::int[], $4::text[]) AS r(idx, key) ON g.group_type_index = r.idx AND g.group_key = r.key
              WHERE g.team_id = $1) AS groups
       FROM (SELECT 1) AS one
       LEFT JOIN person_distinct_ids d ON d.team_id = $1 AND d.distinct_id = $2
       LEFT JOIN persons p ON p.id = d.person_id`,
    [teamId, distinctId, groups.map((g) => g.index), groups.map((g) => g.key)],
    // Run on every decide request: prepared once per connection, never re-planned.
    { preparedName: 'flags_stored_person_v1' },
  );
  const row = rows[0];
  return {
    properties: row?.properties ?? {},
    staticCohortIds: new Set((row?.cohort_ids ?? []).map(Number)),
    hashKeyOverrides: row?.overrides ?? {},
    groups: new Map(Object.entries(row?.groups ?? {}).map(([index, props]) => [Number(index), props])),
  };
}

/**
 * Experience continuity: the first anonymous id a person was seen with becomes the hash key
 * of every continuity flag, for each person the two ids resolve to; an existing key wins.
 */
export async function writeHashKeyOverrides(db: Sql, teamId: number, distinctIds: string[], hashKey: string, flagKeys: string[]): Promise<void> {
  await db.query(
    `INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key)
     SELECT DISTINCT $1::int, d.person_id, k.key, $3::text
       FROM person_distinct_ids d CROSS JOIN unnest($4::text[]) AS k(key)
      WHERE d.team_id = $1 AND d.distinct_id = ANY($2::text[])
     ON CONFLICT DO NOTHING`,
    [teamId, distinctIds, hashKey, flagKeys],
  );
}

export class StoreTimeoutError extends Error {}

/** Rejects after `ms`; the query itself keeps running and its result is ignored. */
export function withStoreTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withDeadline(promise, ms, () => new StoreTimeoutError(`person store did not answer within ${ms} ms`));
}
