import type { PersonWithDistinctIds } from '@sightline/persons';
import { csvText } from '../http/csv-response';
import { orderDistinctIds, personDisplayName } from './person-name';

/** A person as the persons API shows it: PostgreSQL's id and distinct ids, with the properties of the read that found it. */
export type ListedPerson = Pick<PersonWithDistinctIds, 'id' | 'uuid' | 'properties' | 'isIdentified' | 'createdAt' | 'distinctIds'>;

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

/** `displayProperties`: the project's `person_display_name_properties` (null: PostHog's defaults). */
export function serializePerson(person: ListedPerson, displayProperties: readonly string[] | null): PersonJson {
  const distinctIds = orderDistinctIds(person.distinctIds);
  return {
    type: 'person',
    id: person.id,
    uuid: person.uuid,
    name: personDisplayName(person.properties, distinctIds, person.id, displayProperties),
    distinct_ids: distinctIds,
    properties: person.properties,
    is_identified: person.isIdentified,
    created_at: person.createdAt,
  };
}

export const serializePersons = (persons: readonly ListedPerson[], displayProperties: readonly string[] | null): PersonJson[] =>
  persons.map((person) => serializePerson(person, displayProperties));

/** Each person serialized as the CSV export reaches it (a list of 300,000 is not made at once). */
export function* serializedPersons(persons: readonly ListedPerson[], displayProperties: readonly string[] | null): Generator<PersonJson> {
  for (const person of persons) yield serializePerson(person, displayProperties);
}

/** A property value in its column: lists and objects as their JSON text, as PostHog's export writes them. */
const propertyCell = (value: unknown) => (typeof value === 'object' && value !== null ? JSON.stringify(value) : value);

/** About how much CSV text is made at once (then the process serves others before the next slice). */
const CSV_SLICE_CHARS = 64 * 1024;

/** Adds the property keys of `persons` to `keys`: the columns of their CSV. */
export function addPropertyKeys(keys: Set<string>, persons: Iterable<{ properties: Record<string, unknown> }>): void {
  for (const person of persons) for (const key of Object.keys(person.properties)) keys.add(key);
}

/**
 * `format=csv` of a persons list: the person's fields, then one `properties.<key>` column per
 * property any listed person has (sorted; `propertyKeys`: those keys, gathered as the persons
 * were read), as PostHog's export flattens them. Made in slices of about 64 KiB: an export of
 * 300,000 persons is written while capture and decide are served.
 */
export function* personsCsvSlices(listed: Iterable<PersonJson>, propertyKeys?: ReadonlySet<string>): Generator<string> {
  let keySet = propertyKeys;
  let persons = listed;
  if (!keySet) addPropertyKeys((keySet = new Set<string>()), (persons = [...listed]));
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
