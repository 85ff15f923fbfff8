import { Router, type Request, type RequestHandler } from 'express';
import { requireScope } from '@sightline/auth';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import {
  addStaticCohortMembers,
  cohortMembershipSql,
  findCohort,
  insertCohort,
  listCohorts,
  loadCohortDefinitions,
  removeStaticCohortMember,
  setCohortCount,
  syncStaticCohortToClickHouse,
  UnknownCohortError,
  updateCohort,
  type CohortInput,
  type CohortRow,
} from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import type { MetadataStore } from '@sightline/postgres';
import { filtersOf, parsePropertyFilters, PropertyFilterError, QueryParams, type PropertyGroup } from '@sightline/properties';
import { parseBody, parseBoolean, parseList, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { projectAccess } from '../http/project-access';
import { serializeCohorts } from './cohort.serializer';

declare module 'express-serve-static-core' {
  interface Request {
    cohort?: CohortRow;
  }
}

export interface CohortsDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  now: () => number;
  /** Told after every cohort write: decide evaluates dynamic cohorts from the definitions cache. */
  flagChanges: { flagsChanged(teamId: number): Promise<void> };
}

/** PostHog's Cohort.name max_length. */
const MAX_NAME_LENGTH = 400;
/** The most persons one request may add to a static cohort. */
const MAX_MEMBERS_PER_REQUEST = 10_000;

/**
 * A dynamic cohort's definition: `filters.properties` (groups of person-property and cohort
 * filters, nested AND/OR) or PostHog's legacy `groups` (each group's properties ANDed, groups
 * ORed). Behavioural filters are refused by name.
 */
function parseDefinition(body: Record<string, unknown>): { properties: PropertyGroup } | null {
  const options = { types: new Set(['person', 'cohort']) };
  try {
    if (body['filters'] !== undefined && body['filters'] !== null) {
      if (!isJsonObject(body['filters'])) throw errors.validation('filters must be an object {properties}.', 'filters', 'invalid');
      const properties = parsePropertyFilters(body['filters']['properties'], 'filters__properties', options);
      return { properties };
    }
    if (Array.isArray(body['groups']) && body['groups'].length > 0) {
      const groups = body['groups'].map((group, i) => {
        if (!isJsonObject(group)) throw errors.validation('Each group must be an object {properties}.', `groups__${i}`, 'invalid');
        if (group['properties'] === undefined) throw errors.validation('Only property groups are supported in cohort groups.', `groups__${i}`, 'not_supported');
        return parsePropertyFilters(group['properties'], `groups__${i}__properties`, options);
      });
      return { properties: { type: 'OR', values: groups } };
    }
    return null;
  } catch (error) {
    if (error instanceof PropertyFilterError) throw errors.validation(error.message, error.attr, error.code);
    throw error;
  }
}

function parseIds(value: unknown, attr: string): string[] {
  const list = parseList(value, attr);
  if (list.length > MAX_MEMBERS_PER_REQUEST) throw errors.validation(`At most ${MAX_MEMBERS_PER_REQUEST} ids per request.`, attr, 'max_length');
  return list.map((v, i) => parseString(v, `${attr}__${i}`, { maxLength: 400 }));
}

export function createCohortsRouter(deps: CohortsDeps): Router {
  const router = Router();
  const { db, ch } = deps;

  const loadCohort: RequestHandler = async (req, _res, next) => {
    const raw = String(req.params['cohort_id']);
    if (!/^\d{1,9}$/.test(raw)) return next(errors.notFound());
    const cohort = await findCohort(db, req.project!.id, Number(raw));
    if (!cohort) return next(errors.notFound());
    req.cohort = cohort;
    next();
  };

  /** Every cohort a definition names must exist in the project, and none may contain itself. */
  const checkReferences = async (teamId: number, definition: { properties: PropertyGroup } | null, selfId: number | null) => {
    if (!definition) return;
    const definitions = await loadCohortDefinitions(db, teamId);
    if (selfId !== null) definitions.set(selfId, { id: selfId, name: '', isStatic: false, properties: definition.properties });
    for (const filter of filtersOf(definition.properties).filter((f) => f.type === 'cohort')) {
      try {
        cohortMembershipSql(Number(filter.value), definitions, 'id', { params: new QueryParams(), teamParam: '{team:Int64}', nowMs: deps.now() });
      } catch (error) {
        if (error instanceof UnknownCohortError) {
          throw errors.validation(
            selfId !== null && error.cohortId === selfId ? 'A cohort cannot contain itself.' : error.message,
            'filters',
            'cohort_does_not_exist',
          );
        }
        throw error;
      }
    }
  };

  /** SQL for "the `person` row `id` is a member of the cohort", with its parameters and the bound team. */
  const membership = async (cohort: CohortRow) => {
    const definitions = await loadCohortDefinitions(db, cohort.team_id);
    const params = new QueryParams();
    const team = params.add(cohort.team_id, 'Int64');
    return { params, team, members: cohortMembershipSql(cohort.id, definitions, 'id', { params, teamParam: team, nowMs: deps.now() }) };
  };

  /** Counts a dynamic cohort's members now (stored as count / last_calculation). */
  const countDynamic = async (cohort: CohortRow): Promise<void> => {
    const { params, team, members } = await membership(cohort);
    const rows = await (
      await ch.query({
        query: `SELECT count() AS n FROM (SELECT id FROM person WHERE team_id = ${team} GROUP BY id HAVING argMax(is_deleted, version) = 0) WHERE ${members}`,
        query_params: params.values,
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    await setCohortCount(db, cohort.id, Number(rows[0]?.n ?? 0), new Date(deps.now()));
  };

  const refreshed = async (cohort: CohortRow): Promise<CohortRow> => {
    if (cohort.deleted) return cohort;
    if (cohort.is_static)
      await setCohortCount(db, cohort.id, await syncStaticCohortToClickHouse(db, ch, cohort.team_id, cohort.id, deps.now()), new Date(deps.now()));
    else await countDynamic(cohort);
    await deps.flagChanges.flagsChanged(cohort.team_id);
    return (await findCohort(db, cohort.team_id, cohort.id))!;
  };

  const addMembers = async (req: Request, cohort: CohortRow, body: Record<string, unknown>, personAttr: string) => {
    const personUuids = body[personAttr] === undefined ? [] : parseIds(body[personAttr], personAttr);
    const distinctIds = body['distinct_ids'] === undefined ? [] : parseIds(body['distinct_ids'], 'distinct_ids');
    if (personUuids.length + distinctIds.length > 0) await addStaticCohortMembers(db, req.project!.id, cohort.id, { personUuids, distinctIds });
  };

  for (const prefix of ['/api/projects/:project_id', '/api/environments/:project_id']) {
    const base = `${prefix}/cohorts`;
    const read = [requireScope('cohort:read'), projectAccess(db)];
    const write = [requireScope('cohort:write'), projectAccess(db)];

    router.get(base, ...read, async (req, res) => {
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const { rows, count } = await listCohorts(db, req.project!.id, { limit, offset });
      res.json(limitOffsetPage(req, { count, limit, offset, results: await serializeCohorts(db, rows) }));
    });

    router.post(base, ...write, async (req, res) => {
      const body = parseBody(req.body ?? {});
      if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
      const isStatic = body['is_static'] === undefined ? false : parseBoolean(body['is_static'], 'is_static');
      const definition = isStatic ? null : parseDefinition(body);
      if (!isStatic && !definition) throw errors.validation('A dynamic cohort needs filters {properties} (or groups).', 'filters', 'required');
      await checkReferences(req.project!.id, definition, null);
      const input: CohortInput = {
        name: parseString(body['name'], 'name', { maxLength: MAX_NAME_LENGTH }),
        description: body['description'] === undefined ? '' : parseString(body['description'], 'description', { allowBlank: true, maxLength: 10_000 }),
        filters: definition,
        is_static: isStatic,
      };
      let cohort = await insertCohort(db, req.project!.id, input, req.principal!.userId);
      if (isStatic) await addMembers(req, cohort, body, '_create_static_person_ids');
      cohort = await refreshed(cohort);
      res.status(201).json((await serializeCohorts(db, [cohort]))[0]);
    });

    router.get(`${base}/:cohort_id`, ...read, loadCohort, async (req, res) => {
      res.json((await serializeCohorts(db, [req.cohort!]))[0]);
    });

    router.patch(`${base}/:cohort_id`, ...write, loadCohort, async (req, res) => {
      const body = parseBody(req.body ?? {});
      const cohort = req.cohort!;
      const input: CohortInput = {};
      if (body['name'] !== undefined) input.name = parseString(body['name'], 'name', { maxLength: MAX_NAME_LENGTH });
      if (body['description'] !== undefined) input.description = parseString(body['description'], 'description', { allowBlank: true, maxLength: 10_000 });
      if (body['deleted'] !== undefined) input.deleted = parseBoolean(body['deleted'], 'deleted');
      if (body['is_static'] !== undefined && parseBoolean(body['is_static'], 'is_static') !== cohort.is_static) {
        throw errors.validation('A cohort cannot change between static and dynamic.', 'is_static', 'invalid');
      }
      if (!cohort.is_static && (body['filters'] !== undefined || body['groups'] !== undefined)) {
        const definition = parseDefinition(body);
        if (!definition) throw errors.validation('A dynamic cohort needs filters {properties} (or groups).', 'filters', 'required');
        await checkReferences(cohort.team_id, definition, cohort.id);
        input.filters = definition;
      }
      let updated = (await updateCohort(db, cohort.team_id, cohort.id, input))!;
      if (updated.is_static) await addMembers(req, updated, body, '_create_static_person_ids');
      updated = await refreshed(updated);
      if (updated.deleted) await deps.flagChanges.flagsChanged(updated.team_id);
      res.json((await serializeCohorts(db, [updated]))[0]);
    });

    // PostHog answers 405 to DELETE: cohorts are soft-deleted with PATCH {deleted: true}.
    router.delete(`${base}/:cohort_id`, ...write, loadCohort, () => {
      throw errors.methodNotAllowed('DELETE');
    });

    router.patch(`${base}/:cohort_id/add_persons_to_static_cohort`, ...write, loadCohort, async (req, res) => {
      const cohort = req.cohort!;
      if (!cohort.is_static) throw errors.validation('Persons can only be added to static cohorts.', null, 'not_static');
      const body = parseBody(req.body ?? {});
      if (body['person_ids'] === undefined && body['distinct_ids'] === undefined) throw errors.validation('This field is required.', 'person_ids', 'required');
      await addMembers(req, cohort, body, 'person_ids');
      await refreshed(cohort);
      res.json({ success: true });
    });

    router.patch(`${base}/:cohort_id/remove_person_from_static_cohort`, ...write, loadCohort, async (req, res) => {
      const cohort = req.cohort!;
      if (!cohort.is_static) throw errors.validation('Persons can only be removed from static cohorts.', null, 'not_static');
      const body = parseBody(req.body ?? {});
      const personId = parseString(body['person_id'], 'person_id', { maxLength: 100 });
      await removeStaticCohortMember(db, cohort.team_id, cohort.id, personId);
      await refreshed(cohort);
      res.json({ success: true });
    });

    router.get(`${base}/:cohort_id/persons`, ...read, loadCohort, async (req, res) => {
      const cohort = req.cohort!;
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const { params, team, members } = await membership(cohort);
      const rows = await (
        await ch.query({
          query: `SELECT toString(id) AS id, argMax(properties, version) AS properties, argMax(created_at, version) AS created_at, argMax(is_identified, version) AS is_identified
                  FROM person WHERE team_id = ${team} GROUP BY id HAVING argMax(is_deleted, version) = 0 AND ${members}
                  ORDER BY created_at DESC, id LIMIT ${params.add(limit + 1, 'UInt32')} OFFSET ${params.add(offset, 'UInt64')}`,
          query_params: params.values,
          format: 'JSONEachRow',
        })
      ).json<{ id: string; properties: string; created_at: string; is_identified: number }>();
      const results = rows.slice(0, limit).map((r) => ({
        id: r.id,
        uuid: r.id,
        properties: safeJson(r.properties),
        is_identified: Boolean(Number(r.is_identified)),
        created_at: `${r.created_at.replace(' ', 'T')}Z`,
      }));
      res.json({
        results,
        next: rows.length > limit ? `${req.protocol}://${req.get('host')}${req.baseUrl}${req.path}?limit=${limit}&offset=${offset + limit}` : null,
        previous: null,
      });
    });
  }
  return router;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
