import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors, nextWorkTurn } from '@sightline/http';
import {
  cohortDefinitionOf,
  cohortsOfPerson,
  findCohorts,
  loadCohortsForQuery,
  queryPersons,
  referencedCohortIds,
  UnknownCohortError,
  type CohortRow,
  type PersonsQuery,
  type PersonsQueryRow,
} from '@sightline/insights';
import { findPersonsByUuids, findPersonUuid, latestPersonId, personUuidsAfterId, type PersonRef } from '@sightline/persons';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { PropertyCompileError } from '@sightline/properties';
import type { PersonsListFilters } from './persons-input';
import { addPropertyKeys, type ListedPerson } from './person.serializer';

export interface PersonsDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  now: () => number;
  /** Called after every person write, so decide's per-process person caches drop the project. */
  personsChanged?: (teamId: number) => Promise<void>;
}

/** Persons created after a list's first page that later pages leave out, at most this many. */
const MAX_SNAPSHOT_EXCLUSIONS = 10_000;
/** Rows a CSV export reads per query. */
const CSV_CHUNK = 10_000;

/**
 * The persons of query rows (ClickHouse's copies) with their integer ids and distinct ids from
 * PostgreSQL (the source of truth). A person deleted between the two reads is left out; the order
 * is the rows'.
 */
export async function listedPersonsOf(db: Sql, teamId: number, rows: readonly PersonsQueryRow[]): Promise<ListedPerson[]> {
  if (rows.length === 0) return [];
  const stored = await findPersonsByUuids(
    db,
    teamId,
    rows.map((row) => row.uuid),
  );
  return rows.flatMap((row) => {
    const person = stored.get(row.uuid);
    return person ? [{ ...row, id: person.id, distinctIds: person.distinctIds }] : [];
  });
}

/** The list's query from its filters: the cohorts they name loaded, persons created after now left out. */
async function personsQueryOf(deps: PersonsDeps, teamId: number, filters: PersonsListFilters): Promise<Omit<PersonsQuery, 'limit' | 'offset'>> {
  const named = [...referencedCohortIds(filters.properties), ...(filters.cohortId === null ? [] : [filters.cohortId])];
  return { ...filters, teamId, nowMs: deps.now(), cohorts: await loadCohortsForQuery(deps.db, teamId, named) };
}

/** Runs a persons query, a cohort the filters name that cannot be used answered as a 400. */
async function runQuery(ch: ClickHouseClient, query: PersonsQuery) {
  try {
    return await queryPersons(ch, query);
  } catch (error) {
    if (error instanceof UnknownCohortError) throw errors.validation(error.message, 'cohort', error.reason === 'unknown' ? 'cohort_does_not_exist' : 'invalid');
    if (error instanceof PropertyCompileError) throw errors.validation(error.message, 'properties', 'invalid_input');
    throw error;
  }
}

/**
 * A page of the list, newest first. `through` is the list's snapshot: the highest person id
 * (ids grow with every new person) when its first page was read, carried on in `next` /
 * `previous` as `persons_through`; persons created since are left out of later pages, so pages
 * neither repeat nor skip a person because others were created while a client pages through
 * (PostHog's offset pages do).
 */
export async function listPersons(
  deps: PersonsDeps,
  teamId: number,
  filters: PersonsListFilters,
  page: { limit: number; offset: number; through: string | null },
): Promise<{ persons: ListedPerson[]; count: number; through: string }> {
  const query = await personsQueryOf(deps, teamId, filters);
  const through = page.through ?? (await latestPersonId(deps.db, teamId));
  const excludedUuids = page.through === null ? [] : await personUuidsAfterId(deps.db, teamId, page.through, MAX_SNAPSHOT_EXCLUSIONS);
  const { rows, count } = await runQuery(deps.ch, { ...query, excludedUuids, limit: page.limit, offset: page.offset });
  return { persons: await listedPersonsOf(deps.db, teamId, rows), count, through };
}

/**
 * The list's first `cap` persons for a CSV export, read a chunk at a time with other requests
 * served between chunks, and every property key they have (the CSV's columns).
 */
export async function exportPersons(
  deps: PersonsDeps,
  teamId: number,
  filters: PersonsListFilters,
  cap: number,
): Promise<{ persons: ListedPerson[]; propertyKeys: Set<string> }> {
  const query = await personsQueryOf(deps, teamId, filters);
  const persons: ListedPerson[] = [];
  const propertyKeys = new Set<string>();
  for (let offset = 0; offset < cap; offset += CSV_CHUNK) {
    const { rows } = await runQuery(deps.ch, { ...query, limit: Math.min(CSV_CHUNK, cap - offset), offset });
    const chunk = await listedPersonsOf(deps.db, teamId, rows);
    await nextWorkTurn();
    addPropertyKeys(propertyKeys, chunk);
    for (const person of chunk) persons.push(person);
    if (rows.length < CSV_CHUNK) break;
  }
  return { persons, propertyKeys };
}

/** The project's live cohorts the person `ref` names is in now; null when there is no such person. */
export async function cohortsOfPersonRef(deps: PersonsDeps, teamId: number, ref: PersonRef): Promise<CohortRow[] | null> {
  const personUuid = await findPersonUuid(deps.db, teamId, ref);
  if (!personUuid) return null;
  // One read of the project's live cohorts: their definitions for the query, their rows for the answer.
  const cohorts = await findCohorts(deps.db, teamId);
  const definitions = new Map(cohorts.map((row) => [row.id, cohortDefinitionOf(row)]));
  const ids = new Set(await cohortsOfPerson(deps.ch, { teamId, personUuid, nowMs: deps.now(), cohorts: definitions }));
  return cohorts.filter((row) => ids.has(row.id));
}
