import type { Request, RequestHandler } from 'express';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors, nextWorkTurn, sendChunks, sendJson } from '@sightline/http';
import {
  cohortDefinitionOf,
  cohortsOfPerson,
  findCohorts,
  isUuidText,
  loadCohortsForQuery,
  PERSONS_CSV_EXPORT_LIMIT,
  queryPersons,
  referencedCohortIds,
  UnknownCohortError,
  type PersonsQuery,
} from '@sightline/insights';
import { changePersonProperties, deletePersons, splitPerson } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { PropertyCompileError } from '@sightline/properties';
import { activityPage, recordActivity } from '../activity-log/activity-log';
import { serializeCohorts } from '../cohorts/cohort.serializer';
import { booleanField, charField, dictField, ignoredBody, integerField, listField, nullable, objectBody } from '../http/body-fields';
import { parseBody, parseBoolean, parseDict, parseInteger, parseList, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage, MAX_PERSONS_PAGE_SIZE } from '../http/pagination';
import { parsePropertiesParam } from '../http/properties-param';
import { RouteTable } from '../http/route-registry';
import { addPropertyKeys, personsCsvSlices, serializePersons, type PersonJson } from './person.serializer';

declare module 'express-serve-static-core' {
  interface Request {
    person?: PersonJson;
  }
}

export interface PersonsDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  now: () => number;
  /** Called after every person write, so decide's per-process person caches drop the project. */
  personsChanged?: (teamId: number) => Promise<void>;
}

/** PostHog's bulk_delete limit per call. */
export const MAX_BULK_DELETE = 1000;
/** The activity log scope of persons (PostHog's). */
const ACTIVITY_SCOPE = 'Person';
/** Rows a CSV export reads per query. */
const CSV_CHUNK = 10_000;
/** Property filters the persons list applies: the person's properties and cohorts. */
const PERSON_FILTER_TYPES = { types: new Set(['person', 'cohort']) };

/** A query parameter as text, or null when absent or empty (an array, from `?a=1&a=2`, takes the first). */
function queryText(req: Request, name: string): string | null {
  const raw = req.query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The list's filters from the query string (everything but paging). */
async function listFilters(db: MetadataStore, req: Request, nowMs: number): Promise<Omit<PersonsQuery, 'limit' | 'offset'>> {
  const teamId = req.project!.id;
  const properties = parsePropertiesParam(queryText(req, 'properties'), PERSON_FILTER_TYPES);
  const cohortText = queryText(req, 'cohort');
  if (cohortText !== null && !/^\d{1,9}$/.test(cohortText)) throw errors.validation('A valid integer is required.', 'cohort', 'invalid');
  const cohortId = cohortText === null ? null : Number(cohortText);
  const cohorts = await loadCohortsForQuery(db, teamId, [...referencedCohortIds(properties), ...(cohortId === null ? [] : [cohortId])]);
  return {
    teamId,
    nowMs,
    properties,
    cohortId,
    cohorts,
    distinctId: queryText(req, 'distinct_id'),
    email: queryText(req, 'email'),
    search: queryText(req, 'search'),
  };
}

/** Persons created after a list's first page that later pages leave out, at most this many. */
const MAX_SNAPSHOT_EXCLUSIONS = 10_000;

/**
 * A list's snapshot: the highest person id (ids grow with every new person) when its first page
 * was read, carried on in `next` / `previous` as `persons_through`, and the persons created
 * since, which later pages leave out. Pages then neither repeat nor skip a person because others
 * were created while a client pages through (PostHog's offset pages do).
 */
async function listSnapshot(db: MetadataStore, teamId: number, through: string | null): Promise<{ through: string; newer: string[] }> {
  if (through !== null && /^\d{1,18}$/.test(through)) {
    const newer = await db.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM persons WHERE team_id = $1 AND id > $2::bigint ORDER BY id LIMIT $3', [
      teamId,
      through,
      MAX_SNAPSHOT_EXCLUSIONS,
    ]);
    return { through, newer: newer.map((r) => r.uuid) };
  }
  const [latest] = await db.query<{ id: string | null }>('SELECT max(id)::text AS id FROM persons WHERE team_id = $1', [teamId]);
  return { through: latest?.id ?? '0', newer: [] };
}

/** Runs a persons query, a cohort the filters name that cannot be used answered as a 400. */
async function runQuery(deps: PersonsDeps, query: PersonsQuery) {
  try {
    return await queryPersons(deps.ch, query);
  } catch (error) {
    if (error instanceof UnknownCohortError) throw errors.validation(error.message, 'cohort', error.reason === 'unknown' ? 'cohort_does_not_exist' : 'invalid');
    if (error instanceof PropertyCompileError) throw errors.validation(error.message, 'properties', 'invalid_input');
    throw error;
  }
}

const personBody = objectBody({ properties: dictField('The properties to set') }, ['properties']);
const bulkDeleteBody = objectBody({
  delete_events: booleanField,
  distinct_ids: nullable(listField(undefined, 'Distinct ids whose persons to delete (at most 1000)')),
  ids: nullable(listField(undefined, 'Person uuids to delete (at most 1000), instead of distinct_ids')),
});

/** Persons under `/api/environments/:project_id/persons/` (and `/api/projects/…`). */
export function createPersonsRoutes(deps: PersonsDeps): RouteTable {
  const routes = new RouteTable();
  const { db, ch } = deps;
  const personsChanged = deps.personsChanged ?? (() => Promise.resolve());

  /** The uuid of the project's person named by its uuid or integer id; null when none, undefined when `raw` is neither. */
  const personUuidOf = async (teamId: number, raw: string): Promise<string | null | undefined> => {
    let stored: { uuid: string }[];
    if (isUuidText(raw)) stored = await db.query('SELECT uuid::text AS uuid FROM persons WHERE team_id = $1 AND uuid = $2::uuid', [teamId, raw]);
    else if (/^\d{1,18}$/.test(raw)) stored = await db.query('SELECT uuid::text AS uuid FROM persons WHERE team_id = $1 AND id = $2::bigint', [teamId, raw]);
    else return undefined;
    return stored[0]?.uuid ?? null;
  };

  const loadPerson: RequestHandler = async (req, _res, next) => {
    const raw = String(req.params['person_id']);
    const teamId = req.project!.id;
    const uuid = await personUuidOf(teamId, raw);
    if (uuid === undefined) {
      return next(
        errors.validation(
          `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${raw} instead.`,
          null,
          'invalid',
        ),
      );
    }
    if (!uuid) return next(errors.notFound());
    req.person = (await personsByUuid(teamId, [uuid]))[0];
    if (!req.person) return next(errors.notFound());
    next();
  };

  /** Persons of the project by uuid, in the list's shape, read from PostgreSQL (the source of truth). */
  const personsByUuid = async (teamId: number, uuids: string[]): Promise<PersonJson[]> => {
    const rows = await db.query<{ uuid: string; properties: Record<string, unknown>; is_identified: boolean; created_at: Date | string }>(
      'SELECT uuid::text AS uuid, properties, is_identified, created_at FROM persons WHERE team_id = $1 AND uuid = ANY($2::uuid[])',
      [teamId, uuids],
    );
    return serializePersons(
      db,
      teamId,
      rows.map((r) => ({ uuid: r.uuid, properties: r.properties ?? {}, isIdentified: r.is_identified, createdAt: new Date(r.created_at).toISOString() })),
    );
  };

  const logActivity = (req: Request, person: PersonJson, activity: string, changes: unknown[] | null = null) =>
    recordActivity(db, {
      teamId: req.project!.id,
      organizationId: req.project!.organization_id,
      userId: req.principal!.userId,
      scope: ACTIVITY_SCOPE,
      itemId: person.id,
      activity,
      detail: { name: person.name, changes: changes as never },
    });

  routes.inProject((project) => {
    const base = '/persons';
    const read = { scope: 'person:read' } as const;
    const write = { scope: 'person:write' } as const;

    project.get(
      base,
      { ...read, summary: 'List persons (filters, stable pages; format=csv exports up to 300,000)', list: true, throttle: 'clickhouse' },
      async (req, res) => {
        const filters = await listFilters(db, req, deps.now());
        const teamId = req.project!.id;
        if (queryText(req, 'format') === 'csv') {
          const cap = Math.min(queryInteger(req.query['limit'], PERSONS_CSV_EXPORT_LIMIT, 1), PERSONS_CSV_EXPORT_LIMIT);
          const persons: PersonJson[] = [];
          const propertyKeys = new Set<string>();
          for (let offset = 0; offset < cap; offset += CSV_CHUNK) {
            const { rows } = await runQuery(deps, { ...filters, limit: Math.min(CSV_CHUNK, cap - offset), offset });
            const chunk = await serializePersons(db, teamId, rows);
            await nextWorkTurn();
            addPropertyKeys(propertyKeys, chunk);
            for (const person of chunk) persons.push(person);
            if (rows.length < CSV_CHUNK) break;
          }
          // The header names every property of every person, so the rows are read first; the
          // text is then made and sent in slices, other requests served between them.
          res.type('text/csv');
          await sendChunks(res, personsCsvSlices(persons, propertyKeys));
          return;
        }
        const limit = Math.min(queryInteger(req.query['limit'], 100, 1), MAX_PERSONS_PAGE_SIZE);
        const offset = queryInteger(req.query['offset'], 0, 0);
        const snapshot = await listSnapshot(db, teamId, queryText(req, 'persons_through'));
        const { rows, count } = await runQuery(deps, { ...filters, excludedUuids: snapshot.newer, limit, offset });
        await sendJson(
          res,
          limitOffsetPage(req, { count, limit, offset, results: await serializePersons(db, teamId, rows) }, { persons_through: snapshot.through }),
        );
      },
    );

    // PostHog: persons are created by ingestion ($identify, $set, …), never through this API.
    project.post(base, { ...write, summary: 'Refused: persons are created by ingestion', throttle: 'clickhouse', body: ignoredBody }, () => {
      throw errors.methodNotAllowed('POST', 'Creating persons via this API is not allowed. Please create persons by sending an $identify event.');
    });

    project.post(
      `${base}/bulk_delete`,
      {
        ...write,
        summary: 'Delete persons by distinct ids or ids (optionally their events)',
        throttle: 'clickhouse',
        body: bulkDeleteBody,
        example: () => ({ distinct_ids: ['user-1'], delete_events: false }),
      },
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        const deleteEvents = body['delete_events'] === undefined ? false : parseBoolean(body['delete_events'], 'delete_events');
        const teamId = req.project!.id;
        const distinctIds = body['distinct_ids'] === undefined || body['distinct_ids'] === null ? [] : parseList(body['distinct_ids'], 'distinct_ids');
        const ids = body['ids'] === undefined || body['ids'] === null ? [] : parseList(body['ids'], 'ids');
        if (distinctIds.length > 0 && ids.length > 0) throw errors.validation('You must provide either distinct_ids or ids, not both', null, 'invalid');
        if (distinctIds.length > MAX_BULK_DELETE) throw errors.validation(`You can only pass ${MAX_BULK_DELETE} distinct_ids in one call`, null, 'invalid');
        if (ids.length > MAX_BULK_DELETE) throw errors.validation(`You can only pass ${MAX_BULK_DELETE} ids in one call`, null, 'invalid');
        if (distinctIds.length === 0 && ids.length === 0) throw errors.validation('You need to specify either distinct_ids or ids', null, 'invalid');
        let found: { id: string }[];
        if (distinctIds.length > 0) {
          const names = distinctIds.map((d, i) => parseString(d, `distinct_ids__${i}`, { maxLength: 400 }));
          found = await db.query('SELECT DISTINCT person_id::text AS id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = ANY($2::text[])', [
            teamId,
            names,
          ]);
        } else {
          // PostHog takes person uuids; integer ids are taken too.
          const texts = ids.map((v, i) => parseString(v, `ids__${i}`, { maxLength: 100 }));
          const uuids = texts.filter(isUuidText);
          const numbers = texts.filter((t) => /^\d{1,18}$/.test(t));
          found = await db.query('SELECT id::text AS id FROM persons WHERE team_id = $1 AND (uuid = ANY($2::uuid[]) OR id = ANY($3::bigint[]))', [
            teamId,
            uuids,
            numbers,
          ]);
        }
        const personIds = found.map((r) => Number(r.id));
        const deleted = await deletePersons({ db, ch }, teamId, personIds, { deleteEvents, requestedBy: req.principal!.userId });
        if (deleted.length > 0) await personsChanged(teamId);
        for (const person of deleted) {
          await recordActivity(db, {
            teamId,
            organizationId: req.project!.organization_id,
            userId: req.principal!.userId,
            scope: ACTIVITY_SCOPE,
            itemId: person.id,
            activity: 'deleted',
            // PostHog names a bulk-deleted person by its uuid.
            detail: { name: person.uuid, changes: null },
          });
        }
        res.status(202).json({ persons_found: personIds.length, persons_deleted: deleted.length, events_deletion_queued: deleteEvents ? deleted.length : 0 });
      },
    );

    project.get(`${base}/values`, { ...read, summary: 'Values of a person property with counts', throttle: 'clickhouse' }, async (req, res) => {
      const key = queryText(req, 'key');
      if (key === null) throw errors.validation('This field is required.', 'key', 'required');
      const value = queryText(req, 'value');
      const rows = await (
        await ch.query({
          query: `SELECT JSONExtractString(p, {key:String}) AS name, count() AS count FROM (
                    SELECT argMax(properties, version) AS p, argMax(is_deleted, version) AS deleted FROM person WHERE team_id = {team:Int64} GROUP BY id)
                  WHERE deleted = 0 AND JSONHas(p, {key:String}) AND (isNull({value:Nullable(String)}) OR positionCaseInsensitiveUTF8(name, assumeNotNull({value:Nullable(String)})) > 0)
                  GROUP BY name ORDER BY count DESC, name LIMIT 100`,
          query_params: { team: req.project!.id, key, value },
          format: 'JSONEachRow',
        })
      ).json<{ name: string; count: string }>();
      res.json(rows.map((r) => ({ name: r.name, count: Number(r.count) })));
    });

    project.get(
      `${base}/activity`,
      { scope: 'activity_log:read', summary: "Activity on the project's persons", list: true, throttle: 'clickhouse' },
      async (req, res) => {
        res.json(await activityPage(db, req, { teamId: req.project!.id, scope: ACTIVITY_SCOPE, ...activityPaging(req) }));
      },
    );

    // PostHog's `persons/cohorts/?person_id=<uuid>`: the cohorts the person is in now.
    project.get(
      `${base}/cohorts`,
      { scope: 'cohort:read', summary: 'Cohorts a person is in (person_id: uuid or id)', throttle: 'clickhouse' },
      async (req, res) => {
        const raw = queryText(req, 'person_id');
        if (raw === null) throw errors.validation('This field is required.', 'person_id', 'required');
        const teamId = req.project!.id;
        const personUuid = await personUuidOf(teamId, raw);
        if (!personUuid) throw errors.notFound();
        // One read of the project's live cohorts: their definitions for the query, their rows for the answer.
        const cohorts = await findCohorts(db, teamId);
        const definitions = new Map(cohorts.map((row) => [row.id, cohortDefinitionOf(row)]));
        const ids = new Set(await cohortsOfPerson(ch, { teamId, personUuid, nowMs: deps.now(), cohorts: definitions }));
        res.json({
          results: await serializeCohorts(
            db,
            cohorts.filter((row) => ids.has(row.id)),
          ),
        });
      },
    );

    project.get(`${base}/:person_id`, { ...read, summary: 'Retrieve a person by id or uuid', throttle: 'clickhouse' }, loadPerson, (req, res) => {
      res.json(req.person);
    });

    const update: RequestHandler = async (req, res) => {
      const body = parseBody(req.body ?? {});
      if (body['properties'] === undefined) throw errors.validation('This field is required.', 'properties', 'required');
      const set = parseDict(body['properties'], 'properties');
      const person = req.person!;
      const changed = await changePersonProperties({ db, ch }, req.project!.id, person.id, { set });
      if (!changed) throw errors.notFound();
      await personsChanged(req.project!.id);
      const after = (await personsByUuid(req.project!.id, [person.uuid]))[0]!;
      await logActivity(req, after, 'updated', [
        { type: 'Person', action: 'changed', field: 'properties', before: person.properties, after: after.properties },
      ]);
      res.json(after);
    };
    project.patch(
      `${base}/:person_id`,
      { ...write, summary: "Change a person's properties", throttle: 'clickhouse', body: personBody, example: () => ({ properties: { plan: 'pro' } }) },
      loadPerson,
      update,
    );
    project.put(
      `${base}/:person_id`,
      { ...write, summary: "Replace a person's properties", throttle: 'clickhouse', body: personBody, example: () => ({ properties: { plan: 'pro' } }) },
      loadPerson,
      update,
    );

    project.delete(
      `${base}/:person_id`,
      { ...write, summary: "Delete a person (delete_events=true queues its events' deletion)", throttle: 'clickhouse' },
      loadPerson,
      async (req, res) => {
        const deleteEvents = req.query['delete_events'] === undefined ? false : parseBoolean(req.query['delete_events'], 'delete_events');
        const person = req.person!;
        await deletePersons({ db, ch }, req.project!.id, [person.id], { deleteEvents, requestedBy: req.principal!.userId });
        await personsChanged(req.project!.id);
        await logActivity(req, person, 'deleted');
        res.status(204).end();
      },
    );

    project.post(
      `${base}/:person_id/update_property`,
      {
        ...write,
        summary: 'Set one person property',
        throttle: 'clickhouse',
        body: objectBody({ key: charField(), value: { description: 'Any JSON value' } }, ['key', 'value']),
        example: () => ({ key: 'plan', value: 'pro' }),
      },
      loadPerson,
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        if (body['key'] === undefined) throw errors.validation('This field is required.', 'key', 'required');
        if (!('value' in body)) throw errors.validation('This field is required.', 'value', 'required');
        const key = parseString(body['key'], 'key', { maxLength: 400 });
        const person = req.person!;
        await changePersonProperties({ db, ch }, req.project!.id, person.id, { set: { [key]: body['value'] } });
        await personsChanged(req.project!.id);
        await logActivity(req, person, 'updated', [
          { type: 'Person', action: 'changed', field: key, before: person.properties[key] ?? null, after: body['value'] },
        ]);
        // PostHog answers 202: its change goes through ingestion; here it is already applied.
        res.status(202).end();
      },
    );

    project.post(
      `${base}/:person_id/delete_property`,
      {
        ...write,
        summary: 'Remove one person property',
        throttle: 'clickhouse',
        body: objectBody({ $unset: charField('The property') }, ['$unset']),
        example: () => ({ $unset: 'plan' }),
      },
      loadPerson,
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        if (body['$unset'] === undefined) throw errors.validation('This field is required.', '$unset', 'required');
        const key = parseString(body['$unset'], '$unset', { maxLength: 400 });
        const person = req.person!;
        await changePersonProperties({ db, ch }, req.project!.id, person.id, { unset: [key] });
        await personsChanged(req.project!.id);
        await logActivity(req, person, 'updated', [{ type: 'Person', action: 'deleted', field: key, before: person.properties[key] ?? null, after: null }]);
        res.status(201).json({ success: true });
      },
    );

    project.post(
      `${base}/:person_id/split`,
      {
        ...write,
        summary: 'Split a person: each distinct id but main_distinct_id becomes a person of its own',
        throttle: 'clickhouse',
        body: objectBody({ main_distinct_id: nullable(charField('The distinct id the person keeps')), max_splits: nullable(integerField) }),
        example: () => ({ main_distinct_id: 'user-1' }),
      },
      loadPerson,
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        const main =
          body['main_distinct_id'] == null || body['main_distinct_id'] === ''
            ? null
            : parseString(body['main_distinct_id'], 'main_distinct_id', { maxLength: 400 });
        const maxSplits = body['max_splits'] == null ? null : parseInteger(body['max_splits'], 'max_splits', { min: 1 });
        const person = req.person!;
        if (main !== null && !person.distinct_ids.includes(main))
          throw errors.validation('main_distinct_id is not a distinct id of this person.', 'main_distinct_id', 'invalid');
        const split = await splitPerson({ db, ch }, req.project!.id, person.id, { mainDistinctId: main, maxSplits, nowMs: deps.now() });
        if (!split) throw errors.notFound();
        await personsChanged(req.project!.id);
        await logActivity(req, person, 'split_person', [
          { type: 'Person', action: 'split', field: 'distinct_ids', before: person.distinct_ids, after: split.moved.map((m) => m.distinctId) },
        ]);
        // PostHog splits in a background task and answers 201 at once; here it is done when answered.
        res.status(201).json({ success: true });
      },
    );

    project.get(
      `${base}/:person_id/activity`,
      { scope: 'activity_log:read', summary: 'Activity on one person', list: true, throttle: 'clickhouse' },
      loadPerson,
      async (req, res) => {
        res.json(await activityPage(db, req, { teamId: req.project!.id, scope: ACTIVITY_SCOPE, itemId: String(req.person!.id), ...activityPaging(req) }));
      },
    );
  });
  return routes;
}

/** PostHog's activity paging: `limit` (default 10) and 1-based `page`. */
function activityPaging(req: Request): { limit: number; page: number } {
  return { limit: Math.min(queryInteger(req.query['limit'], 10, 1), 1000), page: queryInteger(req.query['page'], 1, 1) };
}
