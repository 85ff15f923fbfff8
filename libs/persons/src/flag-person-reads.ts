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

/** What one decide request asks the store for: a distinct id and the groups it names. */
export interface StoredPersonRequest {
  distinctId: string;
  groups: Array<{ index: number; key: string }>;
}

/**
 * One round trip for everything decide reads per request: the person behind the distinct
 * id (or nothing), its static cohorts and hash-key overrides, and the requested groups.
 */
export async function readStoredPerson(db: Sql, teamId: number, distinctId: string, groups: Array<{ index: number; key: string }>): Promise<PersonForDecide> {
  return (await readStoredPersons(db, teamId, [{ distinctId, groups }]))[0]!;
}

/**
 * readStoredPerson for several requests of one project in one statement (decide's person cache
 * reads the answers it refreshes, and the misses that queue behind reads in flight, together):
 * the persons in request order, then every requested group once; each answer gets the groups
 * its own request named.
 */
export async function readStoredPersons(db: Sql, teamId: number, requests: readonly StoredPersonRequest[]): Promise<PersonForDecide[]> {
  const groupKeyOf = (index: number | null, key: string | null) => `${index}\u0000${key}`;
  const groupKeys = new Map<string, { index: number; key: string }>();
  for (const request of requests) for (const g of request.groups) groupKeys.set(groupKeyOf(g.index, g.key), g);
  const groupsAsked = [...groupKeys.values()];
  const rows = await db.query<{
    i: number | null;
    uuid: string | null;
    properties: Record<string, unknown> | null;
    cohort_ids: number[] | null;
    overrides: Record<string, string> | null;
    group_index: number | null;
    group_key: string | null;
  }>(
    // The statement lives in a function (migration 0155) that keeps one plan per session instead of planning every read.
    'SELECT i, uuid, properties, cohort_ids, overrides, group_index, group_key FROM flags_stored_persons($1, $2, $3, $4)',
    [teamId, requests.map((r) => r.distinctId), groupsAsked.map((g) => g.index), groupsAsked.map((g) => g.key)],
    // Run on every decide request the cache cannot answer: prepared once per connection.
    { preparedName: 'flags_stored_persons_v2' },
  );
  const storedGroups = new Map<string, Record<string, unknown>>();
  const persons: PersonForDecide[] = requests.map(() => ({
    personUuid: null,
    properties: {},
    staticCohortIds: new Set(),
    hashKeyOverrides: {},
    groups: new Map(),
  }));
  for (const row of rows) {
    if (row.i === null) {
      storedGroups.set(groupKeyOf(row.group_index, row.group_key), row.properties ?? {});
      continue;
    }
    persons[row.i - 1] = {
      personUuid: row.uuid,
      properties: row.properties ?? {},
      staticCohortIds: new Set((row.cohort_ids ?? []).map(Number)),
      hashKeyOverrides: row.overrides ?? {},
      groups: new Map(),
    };
  }
  requests.forEach((request, i) => {
    for (const g of request.groups) {
      const properties = storedGroups.get(groupKeyOf(g.index, g.key));
      if (properties) persons[i]!.groups.set(g.index, properties);
    }
  });
  return persons;
}

/**
 * Every distinct id of a project, when it has at most `most` of them (else null): what lets
 * decide's person cache answer a distinct id it has never seen without a store read (an id
 * missing from this list, and from every id announced since, has no person).
 */
export async function readProjectDistinctIds(db: Sql, teamId: number, most: number): Promise<string[] | null> {
  const rows = await db.query<{ distinct_id: string }>('SELECT distinct_id FROM person_distinct_ids WHERE team_id = $1 LIMIT $2', [teamId, most + 1]);
  return rows.length > most ? null : rows.map((r) => r.distinct_id);
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
