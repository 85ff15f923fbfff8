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
 * Persons read from PostgreSQL per query. The embedded PostgreSQL runs one statement at a time
 * for the whole process (decide's person reads, the worker's person writes that capture waits
 * for): a page of 1,000 persons in one statement held it for most of a second, in slices of this
 * many the others run in between.
 */
const PERSONS_PER_READ = 100;

/**
 * The persons of a query page, with their integer ids and distinct ids from PostgreSQL (the
 * source of truth). A person deleted between the two reads is left out; the order is the page's.
 */
export async function serializePersons(db: Sql, teamId: number, rows: readonly PersonsQueryRow[]): Promise<PersonJson[]> {
  if (rows.length === 0) return [];
  const [project] = await db.query<{ names: string[] | null }>('SELECT person_display_name_properties AS names FROM projects WHERE id = $1', [teamId]);
  const byUuid = new Map<string, { id: string; distinct_ids: string[] | null }>();
  for (let start = 0; start < rows.length; start += PERSONS_PER_READ) {
    // Joined to the list (each uuid one index lookup) rather than `uuid = ANY(list)`, which
    // PGlite checked against every one of the project's persons.
    const stored = await db.query<{ id: string; uuid: string; distinct_ids: string[] | null }>(
      `SELECT p.id::text AS id, p.uuid::text AS uuid,
              (SELECT array_agg(d.distinct_id ORDER BY d.distinct_id) FROM person_distinct_ids d WHERE d.person_id = p.id) AS distinct_ids
         FROM unnest($2::uuid[]) AS listed(uuid) JOIN persons p ON p.team_id = $1 AND p.uuid = listed.uuid`,
      [teamId, rows.slice(start, start + PERSONS_PER_READ).map((r) => r.uuid)],
    );
    for (const person of stored) byUuid.set(person.uuid, person);
  }
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

/** About how much CSV text is made at once (then the process serves others before the next slice). */
const CSV_SLICE_CHARS = 64 * 1024;

/** Adds the property keys of `persons` to `keys`: the columns of their CSV. */
export function addPropertyKeys(keys: Set<string>, persons: readonly PersonJson[]): void {
  for (const person of persons) for (const key of Object.keys(person.properties)) keys.add(key);
}

/**
 * `format=csv` of a persons list: the person's fields, then one `properties.<key>` column per
 * property any listed person has (sorted; `propertyKeys`: those keys, gathered as the persons
 * were read), as PostHog's export flattens them. Made in slices of about 64 KiB: an export of
 * 300,000 persons is written while capture and decide are served.
 */
export function* personsCsvSlices(persons: readonly PersonJson[], propertyKeys?: ReadonlySet<string>): Generator<string> {
  let keySet = propertyKeys;
  if (!keySet) addPropertyKeys((keySet = new Set<string>()), persons);
  const keys = [...keySet].sort();
  const header = ['id', 'uuid', 'name', 'distinct_ids', 'is_identified', 'created_at', ...keys.map((k) => `properties.${k}`)];
  let slice = csvText([header]);
  for (const p of persons) {
    slice += csvText([[p.id, p.uuid, p.name, p.distinct_ids.join(','), p.is_identified, p.created_at, ...keys.map((k) => propertyCell(p.properties[k]))]]);
    if (slice.length >= CSV_SLICE_CHARS) {
      yield slice;
      slice = '';
    }
  }
  if (slice) yield slice;
}

/** The whole of personsCsvSlices. */
export const personsCsv = (persons: readonly PersonJson[]): string => [...personsCsvSlices(persons)].join('');
