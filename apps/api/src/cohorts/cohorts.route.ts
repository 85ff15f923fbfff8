import type { Request, RequestHandler } from 'express';
import multer from 'multer';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors, sendJson } from '@sightline/http';
import {
  addStaticCohortMembers,
  cohortDefinitionOf,
  cohortMembershipSql,
  findCohort,
  insertCohort,
  isUuidText,
  listCohorts,
  loadCohortDefinitions,
  loadCohortsForQuery,
  queryPersons,
  referencedCohortIds,
  refreshStaticCohort,
  removeStaticCohortMember,
  setCohortCount,
  UnknownCohortError,
  updateCohort,
  type CohortDefinition,
  type CohortInput,
  type CohortRow,
  type StaticMemberIds,
} from '@sightline/insights';
import type { MetadataStore } from '@sightline/postgres';
import { QueryParams, type PropertyGroup } from '@sightline/properties';
import { activeFlagsNamingCohorts } from '../feature-flags/feature-flags.repository';
import { parseBody, parseBoolean, parseList, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage, MAX_PERSONS_PAGE_SIZE } from '../http/pagination';
import { RouteTable } from '../http/route-registry';
import { listedPersonsOf, serializePersons } from '../persons';
import { formBody, parseCohortDefinition, readCsvMembers } from './cohort-input';
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
  /** Told after every cohort write: decide evaluates cohorts from the definitions cache. */
  flagChanges: { flagsChanged(teamId: number): Promise<void> };
  /** Told too: decide's per-process person caches hold each person's static cohorts. */
  personsChanged?: (teamId: number) => Promise<void>;
}

/** PostHog's Cohort.name max_length. */
const MAX_NAME_LENGTH = 400;
/** PostHog's Cohort.description max_length. */
const MAX_DESCRIPTION_LENGTH = 1000;
/** The most persons one JSON request may name (PostHog's DEFAULT_COHORT_INSERT_BATCH_SIZE is lower). */
const MAX_MEMBERS_PER_REQUEST = 10_000;
/** A CSV upload's size limit, the JSON body limit of /api. */
const MAX_CSV_BYTES = 5 * 1024 * 1024;

/**
 * PostHog's static cohort upload: a multipart body with the CSV in `csv`, read into memory
 * (bounded) only for requests that are multipart; other fields arrive as text.
 */
const csvUpload = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_CSV_BYTES, files: 1, fields: 20, fieldSize: 1024 * 1024, parts: 21 },
}).single('csv');

const readUpload: RequestHandler = (req, res, next) => {
  csvUpload(req, res, (error: unknown) => {
    if (!error) {
      try {
        if (req.is('multipart/form-data')) req.body = formBody({ ...(req.body as Record<string, unknown>) });
      } catch (refused) {
        return next(refused);
      }
      return next();
    }
    if (error instanceof multer.MulterError) {
      if (error.code === 'LIMIT_FILE_SIZE') return next(errors.payloadTooLarge(MAX_CSV_BYTES));
      if (error.code === 'LIMIT_UNEXPECTED_FILE') return next(errors.validation('Only one file, named csv, may be uploaded.', error.field ?? 'csv', 'invalid'));
      return next(errors.validation(`The upload was refused: ${error.message}.`, error.field ?? null, 'invalid'));
    }
    // busboy's own errors: a truncated or malformed multipart body.
    next(errors.parse(`Malformed request data: ${(error as Error).message}`));
  });
};

function parseIds(value: unknown, attr: string, options: { uuids?: boolean } = {}): string[] {
  const list = parseList(value, attr);
  if (list.length > MAX_MEMBERS_PER_REQUEST) throw errors.validation(`At most ${MAX_MEMBERS_PER_REQUEST} ids per request.`, attr, 'max_length');
  return list.map((v, i) => {
    const id = parseString(v, `${attr}__${i}`, { maxLength: 400 });
    if (options.uuids && !isUuidText(id)) throw errors.validation('Must be a valid UUID.', `${attr}__${i}`, 'invalid');
    return id;
  });
}

const hasIds = (ids: StaticMemberIds) => (ids.personUuids?.length ?? 0) + (ids.distinctIds?.length ?? 0) + (ids.emails?.length ?? 0) > 0;

/** A cohort that cannot be used (unknown, deleted, in a loop, too deep) as the 400 a client gets. */
function cohortRefusal(error: UnknownCohortError, attr: string, selfId: number | null, direct: boolean) {
  if (error.reason === 'cycle' && selfId !== null && error.cohortId === selfId && direct) {
    return errors.validation('A cohort cannot contain itself.', attr, 'invalid');
  }
  return errors.validation(error.message, attr, error.reason === 'unknown' ? 'cohort_does_not_exist' : 'invalid');
}

export function createCohortsRoutes(deps: CohortsDeps): RouteTable {
  const routes = new RouteTable();
  const { db, ch } = deps;
  const stores = { db, ch };
  const decideInputsChanged = async (teamId: number) => {
    await deps.flagChanges.flagsChanged(teamId);
    await deps.personsChanged?.(teamId);
  };

  const loadCohort: RequestHandler = async (req, _res, next) => {
    const raw = String(req.params['cohort_id']);
    if (!/^\d{1,9}$/.test(raw)) return next(errors.notFound());
    const cohort = await findCohort(db, req.project!.id, Number(raw));
    if (!cohort) return next(errors.notFound());
    req.cohort = cohort;
    next();
  };

  /** The cohorts a definition names, loaded (cohorts inside them too), with the definition itself under `selfId`. */
  const definitionsWith = async (teamId: number, self: CohortDefinition): Promise<Map<number, CohortDefinition>> => {
    const definitions = await loadCohortsForQuery(db, teamId, referencedCohortIds(self.properties));
    definitions.set(self.id, self);
    return definitions;
  };

  /** Every cohort a definition names must be a live cohort of the project, with no loop back to the cohort. */
  const checkReferences = async (teamId: number, definition: { properties: PropertyGroup } | null, selfId: number | null) => {
    if (!definition) return;
    // A cohort being created has no id yet: 0 names no cohort.
    const self: CohortDefinition = { id: selfId ?? 0, name: '', isStatic: false, properties: definition.properties };
    try {
      cohortMembershipSql(self.id, await definitionsWith(teamId, self), 'id', { params: new QueryParams(), teamParam: '{team:Int64}', nowMs: deps.now() });
    } catch (error) {
      if (error instanceof UnknownCohortError) {
        throw cohortRefusal(error, 'filters', selfId, selfId !== null && referencedCohortIds(definition.properties).includes(selfId));
      }
      throw error;
    }
  };

  /** SQL for "the `person` row `id` is a member of the cohort", with its parameters and the bound team. */
  const membership = async (cohort: CohortRow) => {
    const definitions = await definitionsWith(cohort.team_id, cohortDefinitionOf(cohort));
    const params = new QueryParams();
    const team = params.add(cohort.team_id, 'Int64');
    try {
      return { params, team, members: cohortMembershipSql(cohort.id, definitions, 'id', { params, teamParam: team, nowMs: deps.now() }) };
    } catch (error) {
      // A cohort this one names was deleted since it was written.
      if (error instanceof UnknownCohortError) throw cohortRefusal(error, 'filters', cohort.id, false);
      throw error;
    }
  };

  /**
   * Counts a dynamic cohort's members now, stored as count / last_calculation. A cohort naming
   * a cohort deleted since keeps its last count (its persons list answers why).
   */
  const countDynamic = async (cohort: CohortRow): Promise<void> => {
    let query: Awaited<ReturnType<typeof membership>>;
    try {
      query = await membership(cohort);
    } catch {
      return;
    }
    const { params, team, members } = query;
    const rows = await (
      await ch.query({
        query: `SELECT count() AS n FROM (SELECT id FROM person WHERE team_id = ${team} GROUP BY id HAVING argMax(is_deleted, version) = 0) WHERE ${members}`,
        query_params: params.values,
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    await setCohortCount(db, cohort.id, Number(rows[0]?.n ?? 0), new Date(deps.now()));
  };

  /** After a write: counts (static cohorts' members are copied to ClickHouse too) and tells decide. */
  const refreshed = async (cohort: CohortRow): Promise<CohortRow> => {
    if (!cohort.deleted) {
      if (cohort.is_static) await refreshStaticCohort(stores, cohort.team_id, cohort.id, deps.now());
      else await countDynamic(cohort);
    }
    await decideInputsChanged(cohort.team_id);
    return (await findCohort(db, cohort.team_id, cohort.id))!;
  };

  /** The persons a create or update names for a static cohort: JSON ids and an uploaded CSV. */
  const memberIds = (req: Request, body: Record<string, unknown>, personAttr: string): StaticMemberIds => {
    const fromCsv = req.file ? readCsvMembers(req.file.buffer) : {};
    return {
      personUuids: [...(body[personAttr] === undefined ? [] : parseIds(body[personAttr], personAttr)), ...(fromCsv.personUuids ?? [])],
      distinctIds: [...(body['distinct_ids'] === undefined ? [] : parseIds(body['distinct_ids'], 'distinct_ids')), ...(fromCsv.distinctIds ?? [])],
      emails: fromCsv.emails ?? [],
    };
  };

  /** Cohorts (this one, and those naming it directly or through others) that active flags use, by flag. */
  const flagsUsing = async (cohort: CohortRow): Promise<string[]> => {
    const definitions = await loadCohortDefinitions(db, cohort.team_id);
    const containing = new Set([cohort.id]);
    for (let grew = true; grew;) {
      grew = false;
      for (const definition of definitions.values()) {
        if (!containing.has(definition.id) && referencedCohortIds(definition.properties).some((id) => containing.has(id))) {
          containing.add(definition.id);
          grew = true;
        }
      }
    }
    return (await activeFlagsNamingCohorts(db, cohort.team_id, [...containing])).map((flag) => flag.name || flag.key);
  };

  for (const prefix of ['/api/projects/:project_id', '/api/environments/:project_id']) {
    const base = `${prefix}/cohorts`;
    const read = { scope: 'cohort:read' } as const;
    const write = { scope: 'cohort:write' } as const;

    routes.get(base, { ...read, summary: 'List cohorts', list: true }, async (req, res) => {
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const type = req.query['type'];
      const search = req.query['search'];
      const createdBy = req.query['created_by_id'];
      const { rows, count } = await listCohorts(db, req.project!.id, {
        limit,
        offset,
        isStatic: type === 'static' ? true : type === 'dynamic' ? false : undefined,
        search: typeof search === 'string' && search !== '' ? search : undefined,
        createdById: typeof createdBy === 'string' && /^\d{1,9}$/.test(createdBy) ? Number(createdBy) : undefined,
      });
      res.json(limitOffsetPage(req, { count, limit, offset, results: await serializeCohorts(db, rows) }));
    });

    routes.post(
      base,
      {
        ...write,
        summary: 'Create a cohort (JSON, or multipart with a CSV of members)',
        example: () => ({ name: 'Pro users', groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }] }] }),
      },
      readUpload,
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
        const isStatic = body['is_static'] === undefined ? false : parseBoolean(body['is_static'], 'is_static');
        if (req.file && !isStatic) throw errors.validation('A CSV of persons can only create a static cohort (is_static: true).', 'csv', 'invalid');
        const definition = isStatic ? null : parseCohortDefinition(body);
        if (!isStatic && !definition) throw errors.validation('A dynamic cohort needs filters {properties} (or groups).', 'filters', 'required');
        await checkReferences(req.project!.id, definition, null);
        const input: CohortInput = {
          name: parseString(body['name'], 'name', { maxLength: MAX_NAME_LENGTH }),
          description:
            body['description'] === undefined ? '' : parseString(body['description'], 'description', { allowBlank: true, maxLength: MAX_DESCRIPTION_LENGTH }),
          filters: definition,
          is_static: isStatic,
        };
        // Read (and refused) before anything is written.
        const members = isStatic ? memberIds(req, body, '_create_static_person_ids') : null;
        let cohort = await insertCohort(db, req.project!.id, input, req.principal!.userId);
        if (members && hasIds(members)) await addStaticCohortMembers(stores, cohort.team_id, cohort.id, members, deps.now());
        cohort = await refreshed(cohort);
        res.status(201).json((await serializeCohorts(db, [cohort]))[0]);
      },
    );

    routes.get(`${base}/:cohort_id`, { ...read, summary: 'Retrieve a cohort' }, loadCohort, async (req, res) => {
      res.json((await serializeCohorts(db, [req.cohort!]))[0]);
    });

    routes.patch(
      `${base}/:cohort_id`,
      { ...write, summary: 'Update a cohort', example: () => ({ description: 'changed' }) },
      loadCohort,
      readUpload,
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        const cohort = req.cohort!;
        const input: CohortInput = {};
        if (body['name'] !== undefined) input.name = parseString(body['name'], 'name', { maxLength: MAX_NAME_LENGTH });
        if (body['description'] !== undefined)
          input.description = parseString(body['description'], 'description', { allowBlank: true, maxLength: MAX_DESCRIPTION_LENGTH });
        if (body['deleted'] !== undefined) input.deleted = parseBoolean(body['deleted'], 'deleted');
        if (body['is_static'] !== undefined && parseBoolean(body['is_static'], 'is_static') !== cohort.is_static) {
          throw errors.validation('A cohort cannot change between static and dynamic.', 'is_static', 'invalid');
        }
        if (req.file && !cohort.is_static) throw errors.validation('A CSV of persons can only be added to a static cohort.', 'csv', 'invalid');
        if (!cohort.is_static && (body['filters'] !== undefined || body['groups'] !== undefined)) {
          const definition = parseCohortDefinition(body);
          if (!definition) throw errors.validation('A dynamic cohort needs filters {properties} (or groups).', 'filters', 'required');
          await checkReferences(cohort.team_id, definition, cohort.id);
          input.filters = definition;
        }
        if (input.deleted === true && !cohort.deleted) {
          const flags = await flagsUsing(cohort);
          if (flags.length > 0) {
            throw errors.validation(
              `This cohort is used in ${flags.length} active feature flag(s): ${flags.join(', ')}. Please remove the cohort from these feature flags before deleting it.`,
              null,
              'invalid',
            );
          }
        }
        const members = cohort.is_static && input.deleted !== true ? memberIds(req, body, '_create_static_person_ids') : null;
        let updated = (await updateCohort(db, cohort.team_id, cohort.id, input))!;
        if (members && hasIds(members)) await addStaticCohortMembers(stores, updated.team_id, updated.id, members, deps.now());
        updated = await refreshed(updated);
        res.json((await serializeCohorts(db, [updated]))[0]);
      },
    );

    // PostHog answers 405 to DELETE: cohorts are soft-deleted with PATCH {deleted: true}.
    routes.delete(`${base}/:cohort_id`, { ...write, summary: 'Refused: PATCH {"deleted": true} removes a cohort' }, loadCohort, () => {
      throw errors.methodNotAllowed('DELETE');
    });

    routes.patch(
      `${base}/:cohort_id/add_persons_to_static_cohort`,
      { ...write, summary: 'Add persons to a static cohort', example: () => ({ person_ids: ['00000000-0000-0000-0000-000000000000'] }) },
      loadCohort,
      async (req, res) => {
        const cohort = req.cohort!;
        if (!cohort.is_static) throw errors.validation('Can only add users to static cohorts', null, 'invalid');
        const body = parseBody(req.body ?? {});
        // PostHog takes person uuids; Sightline also takes distinct ids.
        if (body['person_ids'] === undefined && body['distinct_ids'] === undefined)
          throw errors.validation('This field is required.', 'person_ids', 'required');
        const ids: StaticMemberIds = {
          personUuids: body['person_ids'] === undefined ? [] : parseIds(body['person_ids'], 'person_ids', { uuids: true }),
          distinctIds: body['distinct_ids'] === undefined ? [] : parseIds(body['distinct_ids'], 'distinct_ids'),
        };
        if (!hasIds(ids)) throw errors.validation('person_ids cannot be empty', 'person_ids', 'invalid');
        const found = await addStaticCohortMembers(stores, cohort.team_id, cohort.id, ids, deps.now());
        if (found === 0) throw errors.validation('No valid users to add to cohort', 'person_ids', 'invalid');
        await decideInputsChanged(cohort.team_id);
        res.json({ success: true });
      },
    );

    routes.patch(
      `${base}/:cohort_id/remove_person_from_static_cohort`,
      { ...write, summary: 'Remove a person from a static cohort', example: () => ({ person_id: '00000000-0000-0000-0000-000000000000' }) },
      loadCohort,
      async (req, res) => {
        const cohort = req.cohort!;
        if (!cohort.is_static) throw errors.validation('Can only remove users from static cohorts', null, 'invalid');
        const body = parseBody(req.body ?? {});
        if (body['person_id'] === undefined || body['person_id'] === null || body['person_id'] === '')
          throw errors.validation('person_id is required', 'person_id', 'required');
        const personId = parseString(body['person_id'], 'person_id', { maxLength: 100 });
        if (!isUuidText(personId)) throw errors.validation('person_id must be a valid UUID', 'person_id', 'invalid');
        if (!(await removeStaticCohortMember(stores, cohort.team_id, cohort.id, personId, deps.now()))) {
          throw errors.notFound('Person is not part of the cohort');
        }
        await decideInputsChanged(cohort.team_id);
        res.json({ success: true });
      },
    );

    // PostHog requires person:read here too: the answer lists persons and their properties.
    routes.get(
      `${base}/:cohort_id/persons`,
      { scope: ['cohort:read', 'person:read'], summary: 'List the persons in a cohort', list: true, throttle: 'clickhouse' },
      loadCohort,
      async (req, res) => {
        const cohort = req.cohort!;
        const limit = Math.min(queryInteger(req.query['limit'], 100, 1), MAX_PERSONS_PAGE_SIZE);
        const offset = queryInteger(req.query['offset'], 0, 0);
        const definitions = await definitionsWith(cohort.team_id, cohortDefinitionOf(cohort));
        let page: Awaited<ReturnType<typeof queryPersons>>;
        try {
          page = await queryPersons(ch, { teamId: cohort.team_id, nowMs: deps.now(), cohortId: cohort.id, cohorts: definitions, limit, offset });
        } catch (error) {
          // A cohort this one names was deleted since it was written.
          if (error instanceof UnknownCohortError) throw cohortRefusal(error, 'filters', cohort.id, false);
          throw error;
        }
        await sendJson(
          res,
          limitOffsetPage(req, {
            count: page.count,
            limit,
            offset,
            results: serializePersons(await listedPersonsOf(db, cohort.team_id, page.rows), req.project!.person_display_name_properties),
          }),
        );
      },
    );
  }
  return routes;
}
