import type { Sql } from '@sightline/postgres';
import { PERSON_DISTINCT_IDS_COLUMN, PERSON_ROW_COLUMNS, personWithDistinctIdsOf, type PersonRecord, type PersonWithDistinctIds } from './person-row';
import { UUID_PATTERN } from '@sightline/json-input';

/** A person named by its uuid or its integer id (as decimal text: bigint). */
export type PersonRef = { uuid: string } | { id: string };

type PersonWithDistinctIdsRecord = PersonRecord & { distinct_ids: string[] | null };

/**
 * Persons read per statement. The embedded PostgreSQL runs one statement at a time for the whole
 * process (decide's person reads, the worker's person writes that capture waits for): a page of
 * 1,000 persons in one statement held it for most of a second, in slices of this many the others
 * run in between.
 */
const PERSONS_PER_READ = 100;

/** The person a distinct id belongs to, or null. */
export async function findPersonByDistinctId(sql: Sql, teamId: number, distinctId: string): Promise<PersonWithDistinctIds | null> {
  const [row] = await sql.query<PersonWithDistinctIdsRecord>(
    `SELECT ${PERSON_ROW_COLUMNS}, ${PERSON_DISTINCT_IDS_COLUMN}
       FROM person_distinct_ids pd JOIN persons p ON p.id = pd.person_id
      WHERE pd.team_id = $1 AND pd.distinct_id = $2`,
    [teamId, distinctId],
  );
  return row ? personWithDistinctIdsOf(row) : null;
}

/**
 * The project's persons by uuid, each with its distinct ids, keyed by uuid. Text that is not a
 * uuid names no person; a uuid of no person of the project is absent from the map.
 */
export async function findPersonsByUuids(sql: Sql, teamId: number, uuids: readonly string[]): Promise<Map<string, PersonWithDistinctIds>> {
  const valid = uuids.filter((uuid) => UUID_PATTERN.test(uuid));
  const found = new Map<string, PersonWithDistinctIds>();
  for (let start = 0; start < valid.length; start += PERSONS_PER_READ) {
    // Joined to the list (each uuid one index lookup) rather than `uuid = ANY(list)`, which
    // PGlite checked against every one of the project's persons.
    const rows = await sql.query<PersonWithDistinctIdsRecord>(
      `SELECT ${PERSON_ROW_COLUMNS}, ${PERSON_DISTINCT_IDS_COLUMN}
         FROM unnest($2::uuid[]) AS listed(uuid) JOIN persons p ON p.team_id = $1 AND p.uuid = listed.uuid`,
      [teamId, valid.slice(start, start + PERSONS_PER_READ)],
    );
    for (const row of rows) found.set(row.uuid, personWithDistinctIdsOf(row));
  }
  return found;
}

/** The uuid of the project's person named by `ref`, or null when there is none. */
export async function findPersonUuid(sql: Sql, teamId: number, ref: PersonRef): Promise<string | null> {
  const [row] =
    'uuid' in ref
      ? await sql.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM persons WHERE team_id = $1 AND uuid = $2::uuid', [teamId, ref.uuid])
      : await sql.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM persons WHERE team_id = $1 AND id = $2::bigint', [teamId, ref.id]);
  return row?.uuid ?? null;
}

/** The project's person named by `ref` (a uuid in either case, or its integer id), with its distinct ids; null when there is none. */
export async function findPersonByRef(sql: Sql, teamId: number, ref: PersonRef): Promise<PersonWithDistinctIds | null> {
  if ('uuid' in ref && !UUID_PATTERN.test(ref.uuid)) return null;
  const [row] = await sql.query<PersonWithDistinctIdsRecord>(
    `SELECT ${PERSON_ROW_COLUMNS}, ${PERSON_DISTINCT_IDS_COLUMN}
       FROM persons p WHERE p.team_id = $1 AND ${'uuid' in ref ? 'p.uuid = $2::uuid' : 'p.id = $2::bigint'}`,
    [teamId, 'uuid' in ref ? ref.uuid : ref.id],
  );
  return row ? personWithDistinctIdsOf(row) : null;
}

/** Ids of the project's persons named by uuid or integer id (decimal text); each person once. */
export async function findPersonIdsByRefs(sql: Sql, teamId: number, refs: { uuids: readonly string[]; ids: readonly string[] }): Promise<number[]> {
  const rows = await sql.query<{ id: string }>('SELECT id::text AS id FROM persons WHERE team_id = $1 AND (uuid = ANY($2::uuid[]) OR id = ANY($3::bigint[]))', [
    teamId,
    refs.uuids,
    refs.ids,
  ]);
  return rows.map((row) => Number(row.id));
}

/** Ids of the project's persons the distinct ids belong to; each person once. */
export async function findPersonIdsByDistinctIds(sql: Sql, teamId: number, distinctIds: readonly string[]): Promise<number[]> {
  const rows = await sql.query<{ id: string }>(
    'SELECT DISTINCT person_id::text AS id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = ANY($2::text[])',
    [teamId, distinctIds],
  );
  return rows.map((row) => Number(row.id));
}

/** The highest person id of the project ('0' when it has none); ids grow with every new person. */
export async function latestPersonId(sql: Sql, teamId: number): Promise<string> {
  const [row] = await sql.query<{ id: string | null }>('SELECT max(id)::text AS id FROM persons WHERE team_id = $1', [teamId]);
  return row?.id ?? '0';
}

/** Uuids of the project's persons with an id above `afterId` (decimal text), oldest first, at most `limit`. */
export async function personUuidsAfterId(sql: Sql, teamId: number, afterId: string, limit: number): Promise<string[]> {
  const rows = await sql.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM persons WHERE team_id = $1 AND id > $2::bigint ORDER BY id LIMIT $3', [
    teamId,
    afterId,
    limit,
  ]);
  return rows.map((row) => row.uuid);
}

/** Every distinct id of a project's person (by uuid); empty when there is no such person. */
export async function listDistinctIdsOfPerson(sql: Sql, teamId: number, personUuid: string): Promise<string[]> {
  const rows = await sql.query<{ distinct_id: string }>(
    `SELECT d.distinct_id FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
      WHERE p.team_id = $1 AND p.uuid = $2 ORDER BY d.distinct_id`,
    [teamId, personUuid],
  );
  return rows.map((row) => row.distinct_id);
}

/**
 * The project's persons of these distinct ids, keyed by distinct id (a distinct id of no person
 * is absent). Read in slices, each distinct id one index lookup.
 */
export async function findPersonsByDistinctIds(sql: Sql, teamId: number, distinctIds: readonly string[]): Promise<Map<string, PersonWithDistinctIds>> {
  const unique = [...new Set(distinctIds)];
  const found = new Map<string, PersonWithDistinctIds>();
  for (let start = 0; start < unique.length; start += PERSONS_PER_READ) {
    const rows = await sql.query<PersonWithDistinctIdsRecord & { listed_distinct_id: string }>(
      `SELECT listed.distinct_id AS listed_distinct_id, ${PERSON_ROW_COLUMNS}, ${PERSON_DISTINCT_IDS_COLUMN}
         FROM unnest($2::text[]) AS listed(distinct_id)
         JOIN person_distinct_ids pd ON pd.team_id = $1 AND pd.distinct_id = listed.distinct_id
         JOIN persons p ON p.id = pd.person_id`,
      [teamId, unique.slice(start, start + PERSONS_PER_READ)],
    );
    for (const row of rows) found.set(row.listed_distinct_id, personWithDistinctIdsOf(row));
  }
  return found;
}
