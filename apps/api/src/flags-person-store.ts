import type { Sql } from '@sightline/postgres';

/** What flag evaluation reads about one person (compat §1.4, §1.6, §1.8): one round trip. */
export interface StoredPerson {
  properties: Record<string, unknown>;
  staticCohortIds: Set<number>;
  hashKeyOverrides: Record<string, string>;
}

const NO_PERSON: StoredPerson = { properties: {}, staticCohortIds: new Set(), hashKeyOverrides: {} };

export async function readStoredPerson(db: Sql, teamId: number, distinctId: string): Promise<StoredPerson> {
  const rows = await db.query<{ properties: Record<string, unknown>; cohort_ids: number[]; overrides: Record<string, string> }>(
    `SELECT p.properties,
            ARRAY(SELECT c.cohort_id FROM cohort_people c WHERE c.person_id = p.id) AS cohort_ids,
            (SELECT COALESCE(jsonb_object_agg(h.feature_flag_key, h.hash_key), '{}'::jsonb)
               FROM feature_flag_hash_key_overrides h WHERE h.team_id = $1 AND h.person_id = p.id) AS overrides
       FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
      WHERE d.team_id = $1 AND d.distinct_id = $2`,
    [teamId, distinctId],
  );
  const row = rows[0];
  if (!row) return NO_PERSON;
  return { properties: row.properties ?? {}, staticCohortIds: new Set((row.cohort_ids ?? []).map(Number)), hashKeyOverrides: row.overrides ?? {} };
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

/** Stored properties of the request's groups, by group type index. */
export async function readStoredGroups(db: Sql, teamId: number, groups: Array<{ index: number; key: string }>): Promise<Map<number, Record<string, unknown>>> {
  if (groups.length === 0) return new Map();
  const rows = await db.query<{ group_type_index: number; group_properties: Record<string, unknown> }>(
    `SELECT g.group_type_index, g.group_properties
       FROM groups g JOIN unnest($2::int[], $3::text[]) AS r(idx, key) ON g.group_type_index = r.idx AND g.group_key = r.key
      WHERE g.team_id = $1`,
    [teamId, groups.map((g) => g.index), groups.map((g) => g.key)],
  );
  return new Map(rows.map((row) => [Number(row.group_type_index), row.group_properties ?? {}]));
}

export class StoreTimeoutError extends Error {}

/** Rejects after `ms`; the query itself keeps running and its result is ignored. */
export function withStoreTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeoutError(`person store did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
