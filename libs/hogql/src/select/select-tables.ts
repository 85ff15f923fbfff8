import { EVENTS_TABLE } from '@sightline/clickhouse';

/**
 * The tables a HogQL query can name, each as PostHog's database schema has it
 * (posthog/hogql/database/schema/: events.py, persons.py, person_distinct_ids.py, groups.py,
 * static_cohort_people.py), over Sightline's ClickHouse tables. A query never reads a table
 * directly: each reference becomes a subquery of this module's making that selects the fields
 * the query uses and keeps only the bound project's rows (`team_id = {team}`).
 */

/** What a HogQL field of a table is in the SQL of its subquery (columns of the source `src`). */
export interface FieldSpec {
  /** SQL over the table's source (alias `src`, and `pdi` for joins a field asks for). */
  sql: string;
  /** A JSON text of properties: `field.key` reads a property of it. */
  json?: boolean;
  /** Needs the person-override join (`pdi`): distinct ids re-pointed by merges. */
  needsOverrides?: boolean;
  /** A date-time stored in UTC: read in the project's time zone, as PostHog's printer reads them (toTimeZone). */
  dateTime?: boolean;
}

/** A dotted name that reads another field (`person.id` is `person_id`), or a property of one. */
export interface VirtualField {
  /** The field it reads (a key of `fields`). */
  field: string;
  /** For `person.properties.x`-like chains: the field is JSON and the next name is its key. */
  properties?: true;
}

export interface TableSpec {
  name: string;
  fields: ReadonlyMap<string, FieldSpec>;
  /** Dotted names beginning with a name that is not a field (`person`, `pdi`, `group_0`), by their path (`person.id`). */
  virtual: ReadonlyMap<string, VirtualField>;
  /** What `*` selects, in order. */
  asterisk: readonly string[];
  /**
   * The subquery's FROM … WHERE for these fields: `team` is the bound project id's placeholder,
   * `overrides` whether a field needs the person-override join.
   */
  /**
   * The source's sort key, for conditions of a query its subquery may apply before FINAL
   * (select-prefilter.ts): `exact` fields are key columns as they are, `day` date-times are in the
   * key by their UTC day.
   */
  sortKey?: { exact: readonly string[]; day: readonly string[] };
  source(team: string, overrides: boolean): { from: string; where: string; groupBy?: string; having?: string };
}

const map = <T>(entries: Record<string, T>): ReadonlyMap<string, T> => new Map(Object.entries(entries));

/**
 * A distinct id's current person (as trends read it, docs/data-model.md#persons-in-queries):
 * merges re-point distinct ids through person_distinct_id2, so events sent before a merge read
 * as the merged person; a distinct id without a copy there keeps the event's own person id.
 */
const PERSON_OVERRIDE_JOIN = (team: string) => `LEFT JOIN (
      SELECT distinct_id, argMax(person_id, version) AS person_id
      FROM person_distinct_id2 WHERE team_id = ${team}
      GROUP BY distinct_id
    ) AS pdi ON pdi.distinct_id = src.distinct_id`;

const property = (key: string) => `JSONExtractString(src.properties, '${key}')`;

const groupFields = Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`$group_${i}`, { sql: property(`$group_${i}`) }]));
const groupPropertyFields = Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`group${i}_properties`, { sql: `src.group${i}_properties`, json: true }]));
const groupVirtual = Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`group_${i}.properties`, { field: `group${i}_properties`, properties: true as const }]));

/** events (posthog/hogql/database/schema/events.py), persons resolved through merges. */
const EVENTS: TableSpec = {
  name: 'events',
  fields: map<FieldSpec>({
    uuid: { sql: 'src.uuid' },
    event: { sql: 'src.event' },
    properties: { sql: 'src.properties', json: true },
    timestamp: { sql: 'src.timestamp', dateTime: true },
    distinct_id: { sql: 'src.distinct_id' },
    elements_chain: { sql: 'src.elements_chain' },
    created_at: { sql: 'src.created_at', dateTime: true },
    person_mode: { sql: 'src.person_mode' },
    person_id: { sql: 'if(empty(pdi.distinct_id), src.person_id, pdi.person_id)', needsOverrides: true },
    $session_id: { sql: property('$session_id') },
    $window_id: { sql: property('$window_id') },
    ...groupFields,
    // Person on events: the person's properties as they were when the event was ingested.
    person_properties: { sql: 'src.person_properties', json: true },
    person_created_at: { sql: 'src.person_created_at', dateTime: true },
    ...groupPropertyFields,
    ...Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`group${i}_created_at`, { sql: `src.group${i}_created_at`, dateTime: true }])),
  }),
  virtual: map<VirtualField>({
    'person.id': { field: 'person_id' },
    'person.created_at': { field: 'person_created_at' },
    'person.properties': { field: 'person_properties', properties: true },
    ...Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`group_${i}.created_at`, { field: `group${i}_created_at` }])),
    'pdi.person_id': { field: 'person_id' },
    'pdi.distinct_id': { field: 'distinct_id' },
    'pdi.person.id': { field: 'person_id' },
    'pdi.person.properties': { field: 'person_properties', properties: true },
    ...groupVirtual,
  }),
  asterisk: [
    'uuid',
    'event',
    'properties',
    'timestamp',
    'distinct_id',
    'elements_chain',
    'created_at',
    '$session_id',
    '$window_id',
    'person_id',
    '$group_0',
    '$group_1',
    '$group_2',
    '$group_3',
    '$group_4',
  ],
  // ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid)):
  // distinct_id is in it only through a hash, which two ids may share.
  sortKey: { exact: ['event'], day: ['timestamp'] },
  source: (team, overrides) => ({
    // FINAL: a redelivered event (same uuid) is one row, as in every other query.
    from: `${EVENTS_TABLE} AS src FINAL${overrides ? `\n    ${PERSON_OVERRIDE_JOIN(team)}` : ''}`,
    where: `src.team_id = ${team}`,
  }),
};

/** persons (posthog/hogql/database/schema/persons.py): the latest version of each person not deleted. */
const PERSONS: TableSpec = {
  name: 'persons',
  fields: map<FieldSpec>({
    id: { sql: 'src.id' },
    created_at: { sql: 'argMax(src.created_at, src.version)', dateTime: true },
    properties: { sql: 'argMax(src.properties, src.version)', json: true },
    is_identified: { sql: 'argMax(src.is_identified, src.version)' },
  }),
  virtual: map<VirtualField>({}),
  asterisk: ['id', 'created_at', 'properties', 'is_identified'],
  source: (team) => ({ from: 'person AS src', where: `src.team_id = ${team}`, groupBy: 'src.id', having: 'argMax(src.is_deleted, src.version) = 0' }),
};

/** person_distinct_ids (posthog/hogql/database/schema/person_distinct_ids.py): each distinct id's current person. */
const PERSON_DISTINCT_IDS: TableSpec = {
  name: 'person_distinct_ids',
  fields: map<FieldSpec>({
    distinct_id: { sql: 'src.distinct_id' },
    person_id: { sql: 'argMax(src.person_id, src.version)' },
  }),
  virtual: map<VirtualField>({ 'person.id': { field: 'person_id' } }),
  asterisk: ['distinct_id', 'person_id'],
  source: (team) => ({
    from: 'person_distinct_id2 AS src',
    where: `src.team_id = ${team}`,
    groupBy: 'src.distinct_id',
    having: 'argMax(src.is_deleted, src.version) = 0',
  }),
};

/** groups (posthog/hogql/database/schema/groups.py): the latest version of each group. */
const GROUPS: TableSpec = {
  name: 'groups',
  fields: map<FieldSpec>({
    index: { sql: 'src.group_type_index' },
    key: { sql: 'src.group_key' },
    created_at: { sql: 'argMax(src.created_at, src.version)', dateTime: true },
    properties: { sql: 'argMax(src.group_properties, src.version)', json: true },
  }),
  virtual: map<VirtualField>({}),
  asterisk: ['index', 'key', 'created_at', 'properties'],
  source: (team) => ({
    from: 'groups AS src',
    where: `src.team_id = ${team}`,
    groupBy: 'src.group_type_index, src.group_key',
    having: 'argMax(src.is_deleted, src.version) = 0',
  }),
};

/** static_cohort_people (posthog/hogql/database/schema/static_cohort_people.py): members of static cohorts. */
const STATIC_COHORT_PEOPLE: TableSpec = {
  name: 'static_cohort_people',
  fields: map<FieldSpec>({
    cohort_id: { sql: 'src.cohort_id' },
    person_id: { sql: 'src.person_id' },
  }),
  virtual: map<VirtualField>({ 'person.id': { field: 'person_id' } }),
  asterisk: ['cohort_id', 'person_id'],
  source: (team) => ({
    from: 'person_static_cohort AS src',
    where: `src.team_id = ${team}`,
    groupBy: 'src.cohort_id, src.person_id',
    having: 'argMax(src.is_deleted, src.version) = 0',
  }),
};

/** Every table a query may name, by its HogQL name. */
export const HOGQL_TABLES: ReadonlyMap<string, TableSpec> = map<TableSpec>({
  events: EVENTS,
  persons: PERSONS,
  person_distinct_ids: PERSON_DISTINCT_IDS,
  groups: GROUPS,
  static_cohort_people: STATIC_COHORT_PEOPLE,
});
