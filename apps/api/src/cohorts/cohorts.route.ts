import type { Request } from 'express';
import { errors, sendJson } from '@sightline/http';
import { findCohort, isUuidText, listCohorts, type CohortInput, type CohortRow, type StaticMemberIds } from '@sightline/insights';
import { parseBody, parseBoolean, parseList, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage, MAX_PERSONS_PAGE_SIZE } from '../http/pagination';
import { booleanField, charField, listField, nullable, objectBody } from '../http/body-fields';
import { loadById } from '../http/load-by-id';
import { RouteTable } from '../http/route-registry';
import { listedPersonsOf, serializePersons } from '../persons';
import { parseCohortDefinition, readCsvMembers } from './cohort-input';
import { checkCohortReferences } from './cohort-references';
import { readCohortUpload } from './cohort-upload';
import { serializeCohorts } from './cohort.serializer';
import {
  addPersonsToStaticCohort,
  cohortPersonsPage,
  createCohort,
  editCohort,
  hasMemberIds,
  removePersonFromStaticCohort,
  type CohortsDeps,
} from './cohorts.service';

declare module 'express-serve-static-core' {
  interface Request {
    cohort?: CohortRow;
  }
}

/** PostHog's Cohort.name max_length. */
const MAX_NAME_LENGTH = 400;
/** PostHog's Cohort.description max_length. */
const MAX_DESCRIPTION_LENGTH = 1000;
/** The most persons one JSON request may name (PostHog's DEFAULT_COHORT_INSERT_BATCH_SIZE is lower). */
const MAX_MEMBERS_PER_REQUEST = 10_000;

const idList = listField(charField(), 'Distinct ids');
const cohortFields = {
  is_static: booleanField,
  filters: { description: "A dynamic cohort's definition: {properties: {type: AND|OR, values: [...]}}" },
  groups: { description: "PostHog's older definition: a list of groups of property filters, ORed" },
  name: charField(),
  description: charField(),
  deleted: booleanField,
  _create_static_person_ids: listField(charField(), "A static cohort's members: person uuids"),
  distinct_ids: idList,
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

/** The persons a create or update names for a static cohort: JSON ids and an uploaded CSV. */
function memberIds(req: Request, body: Record<string, unknown>, personAttr: string): StaticMemberIds {
  const fromCsv = req.file ? readCsvMembers(req.file.buffer) : {};
  return {
    personUuids: [...(body[personAttr] === undefined ? [] : parseIds(body[personAttr], personAttr)), ...(fromCsv.personUuids ?? [])],
    distinctIds: [...(body['distinct_ids'] === undefined ? [] : parseIds(body['distinct_ids'], 'distinct_ids')), ...(fromCsv.distinctIds ?? [])],
    emails: fromCsv.emails ?? [],
  };
}

export function createCohortsRoutes(deps: CohortsDeps): RouteTable {
  const routes = new RouteTable();
  const { db } = deps;

  const loadCohort = loadById('cohort_id', 'cohort', (teamId, id) => findCohort(db, teamId, id));

  routes.inProject((project) => {
    const base = '/cohorts';
    const read = { scope: 'cohort:read' } as const;
    const write = { scope: 'cohort:write' } as const;

    project.get(base, { ...read, summary: 'List cohorts', list: true }, async (req, res) => {
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

    project.post(
      base,
      {
        ...write,
        summary: 'Create a cohort (JSON, or multipart with a CSV of members)',
        body: objectBody(cohortFields, ['name']),
        example: () => ({ name: 'Pro users', groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }] }] }),
      },
      readCohortUpload,
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
        const isStatic = body['is_static'] === undefined ? false : parseBoolean(body['is_static'], 'is_static');
        if (req.file && !isStatic) throw errors.validation('A CSV of persons can only create a static cohort (is_static: true).', 'csv', 'invalid');
        const definition = isStatic ? null : parseCohortDefinition(body);
        if (!isStatic && !definition) throw errors.validation('A dynamic cohort needs filters {properties} (or groups).', 'filters', 'required');
        await checkCohortReferences(db, deps.now(), req.project!.id, definition, null);
        const input: CohortInput = {
          name: parseString(body['name'], 'name', { maxLength: MAX_NAME_LENGTH }),
          description:
            body['description'] === undefined ? '' : parseString(body['description'], 'description', { allowBlank: true, maxLength: MAX_DESCRIPTION_LENGTH }),
          filters: definition,
          is_static: isStatic,
        };
        // Read (and refused) before anything is written.
        const members = isStatic ? memberIds(req, body, '_create_static_person_ids') : null;
        const cohort = await createCohort(deps, req.project!.id, req.principal!.userId, input, members);
        res.status(201).json((await serializeCohorts(db, [cohort]))[0]);
      },
    );

    project.get(`${base}/:cohort_id`, { ...read, summary: 'Retrieve a cohort' }, loadCohort, async (req, res) => {
      res.json((await serializeCohorts(db, [req.cohort!]))[0]);
    });

    project.patch(
      `${base}/:cohort_id`,
      { ...write, summary: 'Update a cohort', body: objectBody(cohortFields), example: () => ({ description: 'changed' }) },
      loadCohort,
      readCohortUpload,
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
          await checkCohortReferences(db, deps.now(), cohort.team_id, definition, cohort.id);
          input.filters = definition;
        }
        const members = cohort.is_static && input.deleted !== true ? memberIds(req, body, '_create_static_person_ids') : null;
        const updated = await editCohort(deps, cohort, input, members);
        res.json((await serializeCohorts(db, [updated]))[0]);
      },
    );

    // PostHog answers 405 to DELETE: cohorts are soft-deleted with PATCH {deleted: true}.
    project.delete(`${base}/:cohort_id`, { ...write, summary: 'Refused: PATCH {"deleted": true} removes a cohort' }, loadCohort, () => {
      throw errors.methodNotAllowed('DELETE');
    });

    project.patch(
      `${base}/:cohort_id/add_persons_to_static_cohort`,
      {
        ...write,
        summary: 'Add persons to a static cohort',
        body: objectBody({ person_ids: listField(charField(), 'Person uuids'), distinct_ids: idList }),
        example: () => ({ person_ids: ['00000000-0000-0000-0000-000000000000'] }),
      },
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
        if (!hasMemberIds(ids)) throw errors.validation('person_ids cannot be empty', 'person_ids', 'invalid');
        await addPersonsToStaticCohort(deps, cohort, ids);
        res.json({ success: true });
      },
    );

    project.patch(
      `${base}/:cohort_id/remove_person_from_static_cohort`,
      {
        ...write,
        summary: 'Remove a person from a static cohort',
        body: objectBody({ person_id: nullable(charField('A person uuid')) }),
        example: () => ({ person_id: '00000000-0000-0000-0000-000000000000' }),
      },
      loadCohort,
      async (req, res) => {
        const cohort = req.cohort!;
        if (!cohort.is_static) throw errors.validation('Can only remove users from static cohorts', null, 'invalid');
        const body = parseBody(req.body ?? {});
        if (body['person_id'] === undefined || body['person_id'] === null || body['person_id'] === '')
          throw errors.validation('person_id is required', 'person_id', 'required');
        const personId = parseString(body['person_id'], 'person_id', { maxLength: 100 });
        if (!isUuidText(personId)) throw errors.validation('person_id must be a valid UUID', 'person_id', 'invalid');
        await removePersonFromStaticCohort(deps, cohort, personId);
        res.json({ success: true });
      },
    );

    // PostHog requires person:read here too: the answer lists persons and their properties.
    project.get(
      `${base}/:cohort_id/persons`,
      { scope: ['cohort:read', 'person:read'], summary: 'List the persons in a cohort', list: true, throttle: 'clickhouse' },
      loadCohort,
      async (req, res) => {
        const cohort = req.cohort!;
        const limit = Math.min(queryInteger(req.query['limit'], 100, 1), MAX_PERSONS_PAGE_SIZE);
        const offset = queryInteger(req.query['offset'], 0, 0);
        const page = await cohortPersonsPage(deps, cohort, { limit, offset });
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
  });
  return routes;
}
