import type { Properties } from './property-updates';

/** A person as PostgreSQL stores it (the source of truth): the one shape every reader of `persons` answers. */
export interface PersonRow {
  id: number;
  uuid: string;
  teamId: number;
  properties: Properties;
  isIdentified: boolean;
  version: number;
  /** ISO 8601, UTC. */
  createdAt: string;
}

/** A person with every distinct id that names it, in text order. */
export type PersonWithDistinctIds = PersonRow & { distinctIds: string[] };

/** The columns personRowOf reads, from the `persons` table aliased `p` (bigint id as text: exact past 2^53). */
export const PERSON_ROW_COLUMNS = 'p.id::text AS id, p.uuid::text AS uuid, p.team_id, p.properties, p.is_identified, p.version, p.created_at';

/** The person's distinct ids, in text order, as one more column beside PERSON_ROW_COLUMNS. */
export const PERSON_DISTINCT_IDS_COLUMN =
  '(SELECT array_agg(d.distinct_id ORDER BY d.distinct_id) FROM person_distinct_ids d WHERE d.person_id = p.id) AS distinct_ids';

/** A row as the driver answers PERSON_ROW_COLUMNS. */
export interface PersonRecord {
  id: string;
  uuid: string;
  team_id: number | string;
  properties: Properties | null;
  is_identified: boolean;
  version: number | string;
  created_at: Date | string;
}

export function personRowOf(record: PersonRecord): PersonRow {
  return {
    id: Number(record.id),
    uuid: record.uuid,
    teamId: Number(record.team_id),
    properties: record.properties ?? {},
    isIdentified: record.is_identified,
    version: Number(record.version),
    createdAt: new Date(record.created_at).toISOString(),
  };
}

export function personWithDistinctIdsOf(record: PersonRecord & { distinct_ids: string[] | null }): PersonWithDistinctIds {
  return { ...personRowOf(record), distinctIds: record.distinct_ids ?? [] };
}
