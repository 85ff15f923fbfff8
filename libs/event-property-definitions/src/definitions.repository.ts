import type { Sql } from '@sightline/postgres';
import { inferPropertyType, type PropertyType } from './property-type';

/** PostHog's PropertyDefinition.Type numbering. */
export const PROPERTY_DEFINITION_TYPES = { event: 1, person: 2 } as const;
export type PropertyDefinitionKind = keyof typeof PROPERTY_DEFINITION_TYPES;

/** Event properties that carry person updates or group keys, not properties of the event (PostHog skips them too). */
const NOT_EVENT_PROPERTIES = new Set(['$set', '$set_once', '$unset', '$groups']);
/** Longer names are not recorded (they are almost always data sent as a key by mistake). */
const MAX_NAME_LENGTH = 200;

export interface EventForDefinitions {
  teamId: number;
  event: string;
  properties: Record<string, unknown>;
}

export interface DefinitionSightings {
  events: { teamId: number; name: string; volume: number }[];
  properties: { teamId: number; type: number; name: string; propertyType: PropertyType | null; volume: number }[];
}

/**
 * What one batch of events says about definitions: each name once per project, with how often it was seen.
 * Called on every written run, so names are counted in one map per project and kind (no key text
 * built per property) and the properties walked with for…in (no entry arrays).
 */
export function collectDefinitionSightings(events: readonly EventForDefinitions[]): DefinitionSightings {
  type PropertySighting = DefinitionSightings['properties'][number];
  const eventCounts = new Map<number, Map<string, { teamId: number; name: string; volume: number }>>();
  const propertyCounts = new Map<number, { event: Map<string, PropertySighting>; person: Map<string, PropertySighting> }>();
  const seeProperty = (seen: Map<string, PropertySighting>, teamId: number, type: number, name: string, value: unknown) => {
    if (name.length === 0 || name.length > MAX_NAME_LENGTH) return;
    const sighting = seen.get(name);
    if (sighting) {
      sighting.volume += 1;
      sighting.propertyType ??= inferPropertyType(value);
    } else seen.set(name, { teamId, type, name, propertyType: inferPropertyType(value), volume: 1 });
  };
  const seePersonProperties = (seen: Map<string, PropertySighting>, teamId: number, updates: unknown) => {
    if (!updates || typeof updates !== 'object' || Array.isArray(updates)) return;
    const personProperties = updates as Record<string, unknown>;
    for (const name in personProperties) seeProperty(seen, teamId, PROPERTY_DEFINITION_TYPES.person, name, personProperties[name]);
  };
  for (const event of events) {
    const { teamId, properties } = event;
    if (event.event.length > 0 && event.event.length <= MAX_NAME_LENGTH) {
      let names = eventCounts.get(teamId);
      if (!names) eventCounts.set(teamId, (names = new Map()));
      const seen = names.get(event.event);
      if (seen) seen.volume += 1;
      else names.set(event.event, { teamId, name: event.event, volume: 1 });
    }
    let counts = propertyCounts.get(teamId);
    if (!counts) propertyCounts.set(teamId, (counts = { event: new Map(), person: new Map() }));
    for (const name in properties) {
      if (!NOT_EVENT_PROPERTIES.has(name)) seeProperty(counts.event, teamId, PROPERTY_DEFINITION_TYPES.event, name, properties[name]);
    }
    // Two reads, not a loop over an array of them: no array made per event.
    seePersonProperties(counts.person, teamId, properties['$set']);
    seePersonProperties(counts.person, teamId, properties['$set_once']);
  }
  const propertySightings: PropertySighting[] = [];
  for (const counts of propertyCounts.values()) propertySightings.push(...counts.event.values(), ...counts.person.values());
  return sortedSightings(
    [...eventCounts.values()].flatMap((names) => [...names.values()]),
    propertySightings,
  );
}

// Sorted, so concurrent workers take the rows' locks in one order and never deadlock.
function sortedSightings(
  events: Iterable<DefinitionSightings['events'][number]>,
  properties: Iterable<DefinitionSightings['properties'][number]>,
): DefinitionSightings {
  const byKey = <T extends { teamId: number; name: string }>(a: T, b: T) => a.teamId - b.teamId || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return { events: [...events].sort(byKey), properties: [...properties].sort((a, b) => a.type - b.type || byKey(a, b)) };
}

/** The sightings of two batches as one: volumes added, a property's first known type kept. */
export function mergeDefinitionSightings(a: DefinitionSightings, b: DefinitionSightings): DefinitionSightings {
  const events = new Map(a.events.map((e) => [`${e.teamId}\u0000${e.name}`, { ...e }]));
  for (const e of b.events) {
    const seen = events.get(`${e.teamId}\u0000${e.name}`);
    if (seen) seen.volume += e.volume;
    else events.set(`${e.teamId}\u0000${e.name}`, { ...e });
  }
  const properties = new Map(a.properties.map((p) => [`${p.teamId}\u0000${p.type}\u0000${p.name}`, { ...p }]));
  for (const p of b.properties) {
    const key = `${p.teamId}\u0000${p.type}\u0000${p.name}`;
    const seen = properties.get(key);
    if (seen) {
      seen.volume += p.volume;
      seen.propertyType ??= p.propertyType;
    } else properties.set(key, { ...p });
  }
  return sortedSightings(events.values(), properties.values());
}

/**
 * Adds a batch's sightings: new names are created, known ones get their volume added and
 * last_seen_at moved; a property's type, once known, is kept.
 */
export async function recordDefinitionSightings(db: Sql, sightings: DefinitionSightings): Promise<void> {
  if (sightings.events.length > 0) {
    await db.query(
      `INSERT INTO event_definitions (team_id, name, volume)
       SELECT * FROM unnest($1::int[], $2::text[], $3::bigint[])
       ON CONFLICT (team_id, name) DO UPDATE
         SET volume = event_definitions.volume + EXCLUDED.volume, last_seen_at = now()`,
      [sightings.events.map((e) => e.teamId), sightings.events.map((e) => e.name), sightings.events.map((e) => e.volume)],
    );
  }
  if (sightings.properties.length > 0) {
    const p = sightings.properties;
    await db.query(
      `INSERT INTO property_definitions (team_id, type, name, property_type, volume)
       SELECT * FROM unnest($1::int[], $2::smallint[], $3::text[], $4::text[], $5::bigint[])
       ON CONFLICT (team_id, type, name) DO UPDATE
         SET volume = property_definitions.volume + EXCLUDED.volume, last_seen_at = now(),
             property_type = COALESCE(property_definitions.property_type, EXCLUDED.property_type)`,
      [p.map((x) => x.teamId), p.map((x) => x.type), p.map((x) => x.name), p.map((x) => x.propertyType), p.map((x) => x.volume)],
    );
  }
}

export interface EventDefinitionRow {
  id: number;
  name: string;
  description: string;
  volume: string;
  created_at: Date;
  last_seen_at: Date;
}

export interface PropertyDefinitionRow extends EventDefinitionRow {
  type: number;
  property_type: PropertyType | null;
}

const EVENT_COLUMNS = 'id, name, description, volume, created_at, last_seen_at';
const PROPERTY_COLUMNS = 'id, name, description, type, property_type, volume, created_at, last_seen_at';

interface ListOptions {
  search?: string | null;
  limit: number;
  offset: number;
}

/** Names containing `search` (any case), most seen first, then by name. */
export async function listEventDefinitions(db: Sql, teamId: number, options: ListOptions): Promise<{ rows: EventDefinitionRow[]; count: number }> {
  const where = `team_id = $1 AND ($2::text IS NULL OR name ILIKE '%' || $2 || '%')`;
  const search = options.search ? escapeLike(options.search) : null;
  const [rows, counted] = await Promise.all([
    db.query<EventDefinitionRow>(`SELECT ${EVENT_COLUMNS} FROM event_definitions WHERE ${where} ORDER BY volume DESC, name LIMIT $3 OFFSET $4`, [
      teamId,
      search,
      options.limit,
      options.offset,
    ]),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM event_definitions WHERE ${where}`, [teamId, search]),
  ]);
  return { rows, count: Number(counted[0]?.n ?? 0) };
}

export async function listPropertyDefinitions(
  db: Sql,
  teamId: number,
  options: ListOptions & { type: PropertyDefinitionKind },
): Promise<{ rows: PropertyDefinitionRow[]; count: number }> {
  const where = `team_id = $1 AND type = $2 AND ($3::text IS NULL OR name ILIKE '%' || $3 || '%')`;
  const search = options.search ? escapeLike(options.search) : null;
  const args = [teamId, PROPERTY_DEFINITION_TYPES[options.type], search];
  const [rows, counted] = await Promise.all([
    db.query<PropertyDefinitionRow>(
      `SELECT ${PROPERTY_COLUMNS} FROM property_definitions WHERE ${where}
        ORDER BY volume DESC, name LIMIT $4 OFFSET $5`,
      [...args, options.limit, options.offset],
    ),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM property_definitions WHERE ${where}`, args),
  ]);
  return { rows, count: Number(counted[0]?.n ?? 0) };
}

export async function findEventDefinition(db: Sql, teamId: number, id: number): Promise<EventDefinitionRow | null> {
  const rows = await db.query<EventDefinitionRow>(`SELECT ${EVENT_COLUMNS} FROM event_definitions WHERE team_id = $1 AND id = $2`, [teamId, id]);
  return rows[0] ?? null;
}

export async function findPropertyDefinition(db: Sql, teamId: number, id: number): Promise<PropertyDefinitionRow | null> {
  const rows = await db.query<PropertyDefinitionRow>(`SELECT ${PROPERTY_COLUMNS} FROM property_definitions WHERE team_id = $1 AND id = $2`, [teamId, id]);
  return rows[0] ?? null;
}

/**
 * An event named before any event of that name arrives (volume 0, seen "now"); an existing name
 * is answered as it is, so creating twice never makes two definitions. `created` says which.
 */
export async function createEventDefinition(
  db: Sql,
  teamId: number,
  input: { name: string; description: string },
): Promise<{ row: EventDefinitionRow; created: boolean }> {
  const inserted = await db.query<EventDefinitionRow>(
    `INSERT INTO event_definitions (team_id, name, description) VALUES ($1, $2, $3)
     ON CONFLICT (team_id, name) DO NOTHING RETURNING ${EVENT_COLUMNS}`,
    [teamId, input.name, input.description],
  );
  if (inserted[0]) return { row: inserted[0], created: true };
  const existing = await db.query<EventDefinitionRow>(`SELECT ${EVENT_COLUMNS} FROM event_definitions WHERE team_id = $1 AND name = $2`, [teamId, input.name]);
  return { row: existing[0]!, created: false };
}

export async function updateEventDefinition(db: Sql, teamId: number, id: number, patch: { description?: string }): Promise<EventDefinitionRow | null> {
  const rows = await db.query<EventDefinitionRow>(
    `UPDATE event_definitions SET description = COALESCE($3, description) WHERE team_id = $1 AND id = $2 RETURNING ${EVENT_COLUMNS}`,
    [teamId, id, patch.description ?? null],
  );
  return rows[0] ?? null;
}

/** A property's description, and its type as a person sets it (PostHog lets the type be corrected by hand). */
export async function updatePropertyDefinition(
  db: Sql,
  teamId: number,
  id: number,
  patch: { description?: string; propertyType?: PropertyType | null },
): Promise<PropertyDefinitionRow | null> {
  const rows = await db.query<PropertyDefinitionRow>(
    `UPDATE property_definitions
        SET description = COALESCE($3, description),
            property_type = CASE WHEN $4::boolean THEN $5 ELSE property_type END
      WHERE team_id = $1 AND id = $2 RETURNING ${PROPERTY_COLUMNS}`,
    [teamId, id, patch.description ?? null, patch.propertyType !== undefined, patch.propertyType ?? null],
  );
  return rows[0] ?? null;
}

/** `%` and `_` in a search are literal characters. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
