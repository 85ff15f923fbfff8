import type { Sql } from '@sightline/postgres';

/**
 * What flag evaluation reads about persons: one person and the request's groups for decide
 * (PostHog: rust/feature-flags/src/flags/flag_matching.rs; docs/flags.md), and every person of a
 * project, page by page, for a flag's static cohort.
 */

/** What flag evaluation reads about one person and the request's groups. */
export interface PersonForDecide {
  /** The person's uuid, null when the distinct id has no person: what a change announcement names. */
  personUuid: string | null;
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
export async function readStoredPerson(db: Sql, teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>): Promise<PersonForDecide> {
  const rows = await db.query<{
    uuid: string | null;
    properties: Record<string, unknown> | null;
    cohort_ids: number[] | null;
    overrides: Record<string, string> | null;
    groups: Record<string, Record<string, unknown>> | null;
  }>(
    `SELECT p.uuid, p.properties,
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
    { preparedName: 'flags_stored_person_v2' },
  );
  const row = rows[0];
  return {
    personUuid: row?.uuid ?? null,
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
export async function writeHashKeyOverrides(db: Sql, teamId: number, distinctIds: string[], hashKey: string, flagKeys: string[]): Promise<number> {
  const inserted = await db.query(
    `INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key)
     SELECT DISTINCT $1::int, d.person_id, k.key, $3::text
       FROM person_distinct_ids d CROSS JOIN unnest($4::text[]) AS k(key)
      WHERE d.team_id = $1 AND d.distinct_id = ANY($2::text[])
     ON CONFLICT DO NOTHING
     RETURNING 1`,
    [teamId, distinctIds, hashKey, flagKeys],
  );
  return inserted.length;
}

/** A person as flag evaluation sees it, for evaluating a flag over a whole project. */
export interface PersonForFlags {
  id: string;
  /** The person's first distinct id (lowest version, then alphabetical): what a flag buckets on. */
  distinctId: string | null;
  properties: Record<string, unknown>;
  staticCohortIds: Set<number>;
  hashKeyOverrides: Record<string, string>;
}

/** One page of the project's persons after `afterId`, in id order, with their static cohorts and hash-key overrides. */
export async function listPersonsForFlags(db: Sql, teamId: number, afterId: string, limit: number): Promise<PersonForFlags[]> {
  const persons = await db.query<{ id: string; properties: Record<string, unknown> | null; distinct_id: string | null }>(
    `SELECT p.id::text AS id, p.properties,
            (SELECT d.distinct_id FROM person_distinct_ids d WHERE d.team_id = p.team_id AND d.person_id = p.id
              ORDER BY d.version, d.distinct_id LIMIT 1) AS distinct_id
       FROM persons p WHERE p.team_id = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`,
    [teamId, afterId, limit],
  );
  if (persons.length === 0) return [];
  const ids = persons.map((p) => p.id);
  const [memberships, overrides] = await Promise.all([
    db.query<{ person_id: string; cohort_id: number }>(
      `SELECT cp.person_id::text AS person_id, cp.cohort_id FROM cohort_people cp JOIN cohorts c ON c.id = cp.cohort_id
        WHERE c.team_id = $1 AND c.is_static AND cp.person_id = ANY($2::bigint[])`,
      [teamId, ids],
    ),
    db.query<{ person_id: string; feature_flag_key: string; hash_key: string }>(
      'SELECT person_id::text AS person_id, feature_flag_key, hash_key FROM feature_flag_hash_key_overrides WHERE team_id = $1 AND person_id = ANY($2::bigint[])',
      [teamId, ids],
    ),
  ]);
  const byId = new Map<string, PersonForFlags>(
    persons.map((p) => [p.id, { id: p.id, distinctId: p.distinct_id, properties: p.properties ?? {}, staticCohortIds: new Set(), hashKeyOverrides: {} }]),
  );
  for (const m of memberships) byId.get(m.person_id)?.staticCohortIds.add(m.cohort_id);
  for (const o of overrides) {
    const person = byId.get(o.person_id);
    if (person) person.hashKeyOverrides[o.feature_flag_key] = o.hash_key;
  }
  return [...byId.values()];
}
