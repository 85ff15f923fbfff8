import { isUuidText, type PersonsQueryRow } from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { csvText } from '../http/csv-response';

/** A person as the persons API answers it (PostHog's PersonSerializer), plus `type`. */
export interface PersonJson {
  type: 'person';
  id: number;
  uuid: string;
  name: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  is_identified: boolean;
  created_at: string;
}

/** PostHog's default person display-name properties, in order (posthog/api/person.py get_person_name). */
const DISPLAY_NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName'];

/**
 * The first non-empty display-name property (the project's `person_display_name_properties` when
 * it names any, else PostHog's defaults), else the first distinct id (non-uuid ones first), else the id.
 */
export function personDisplayName(
  properties: Record<string, unknown>,
  distinctIds: readonly string[],
  id: number | string,
  displayProperties: readonly string[] | null = null,
): string {
  for (const key of displayProperties?.length ? displayProperties : DISPLAY_NAME_PROPERTIES) {
    const value = properties[key];
    if (value !== undefined && value !== null && value !== '') return String(value);
  }
  return distinctIds[0] ?? String(id);
}

/** Distinct ids as PostHog lists them: ids that are not uuids first (they name the user), each group in order. */
export function orderDistinctIds(ids: readonly string[]): string[] {
  return [...ids.filter((id) => !isUuidText(id)), ...ids.filter((id) => isUuidText(id))];
}

/**
 * The persons of a query page, with their integer ids and distinct ids from PostgreSQL (the
 * source of truth). A person deleted between the two reads is left out; the order is the page's.
 */
export async function serializePersons(db: Sql, teamId: number, rows: readonly PersonsQueryRow[]): Promise<PersonJson[]> {
  if (rows.length === 0) return [];
  const [stored, [project]] = await Promise.all([
    db.query<{ id: string; uuid: string; distinct_ids: string[] | null }>(
      `SELECT p.id::text AS id, p.uuid::text AS uuid,
              (SELECT array_agg(d.distinct_id ORDER BY d.distinct_id) FROM person_distinct_ids d WHERE d.person_id = p.id) AS distinct_ids
         FROM persons p WHERE p.team_id = $1 AND p.uuid = ANY($2::uuid[])`,
      [teamId, rows.map((r) => r.uuid)],
    ),
    db.query<{ names: string[] | null }>('SELECT person_display_name_properties AS names FROM projects WHERE id = $1', [teamId]),
  ]);
  const byUuid = new Map(stored.map((s) => [s.uuid, s]));
  return rows.flatMap((row) => {
    const person = byUuid.get(row.uuid);
    if (!person) return [];
    const distinctIds = orderDistinctIds(person.distinct_ids ?? []);
    return [
      {
        type: 'person' as const,
        id: Number(person.id),
        uuid: row.uuid,
        name: personDisplayName(row.properties, distinctIds, person.id, project?.names ?? null),
        distinct_ids: distinctIds,
        properties: row.properties,
        is_identified: row.isIdentified,
        created_at: row.createdAt,
      },
    ];
  });
}

/** A property value in its column: lists and objects as their JSON text, as PostHog's export writes them. */
const propertyCell = (value: unknown) => (typeof value === 'object' && value !== null ? JSON.stringify(value) : value);

/**
 * `format=csv` of a persons list: the person's fields, then one `properties.<key>` column per
 * property any listed person has (sorted), as PostHog's export flattens them.
 */
export function personsCsv(persons: readonly PersonJson[]): string {
  const keys = [...new Set(persons.flatMap((p) => Object.keys(p.properties)))].sort();
  const header = ['id', 'uuid', 'name', 'distinct_ids', 'is_identified', 'created_at', ...keys.map((k) => `properties.${k}`)];
  const rows = persons.map((p) => [
    p.id,
    p.uuid,
    p.name,
    p.distinct_ids.join(','),
    p.is_identified,
    p.created_at,
    ...keys.map((k) => propertyCell(p.properties[k])),
  ]);
  return csvText([header, ...rows]);
}
