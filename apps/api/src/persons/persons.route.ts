import { errors, sendChunks, sendJson } from '@sightline/http';
import { personPropertyValues, type CohortRow } from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { activityPage } from '../activity-log';
import { limitOffsetPage } from '../http/pagination';
import { ignoredBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';
import { bulkDeleteBody } from './person-bodies';
import { actorOf, displayPropertiesOf } from './person-context';
import { bulkDeletePersons, PERSONS_ACTIVITY_SCOPE } from './person-changes.service';
import { createPersonRoutes } from './person.route';
import { isCsvRequest, parseActivityPaging, parseBulkDelete, parseCsvCap, parseListFilters, parseListPage, parsePersonRef, queryText } from './persons-input';
import { cohortsOfPersonRef, exportPersons, listPersons, type PersonsDeps } from './persons.service';
import { personsCsvSlices, serializedPersons, serializePersons } from './person.serializer';

const read = { scope: 'person:read', throttle: 'clickhouse' } as const;
const write = { scope: 'person:write', throttle: 'clickhouse' } as const;

export interface PersonsRoutesDeps extends PersonsDeps {
  /**
   * The cohorts folder's serializer, for `persons/cohorts/`. The app passes it in: the cohorts
   * folder imports this one (a cohort's persons), so importing it back would be a cycle.
   */
  serializeCohorts: (db: Sql, rows: CohortRow[]) => Promise<unknown[]>;
}

/** Persons under `/api/environments/:project_id/persons/` (and `/api/projects/…`). */
export function createPersonsRoutes(deps: PersonsRoutesDeps): RouteTable {
  const routes = new RouteTable();
  routes.inProject((project) => {
    project.include(createPersonListRoutes(deps, '/persons'), createPersonRoutes(deps, '/persons'));
  });
  return routes;
}

/** The routes of the project's persons as a whole: list (and CSV export), bulk delete, values, activity, a person's cohorts. */
function createPersonListRoutes(deps: PersonsRoutesDeps, base: string): RouteTable {
  const routes = new RouteTable();
  routes.get(base, { ...read, summary: 'List persons (filters, stable pages; format=csv exports up to 300,000)', list: true }, async (req, res) => {
    const filters = parseListFilters(req);
    if (isCsvRequest(req)) {
      const { persons, propertyKeys } = await exportPersons(deps, req.project!.id, filters, parseCsvCap(req));
      // The header names every property of every person, so the rows are read first; the
      // text is then made and sent in slices, other requests served between them.
      res.type('text/csv');
      return sendChunks(res, personsCsvSlices(serializedPersons(persons, displayPropertiesOf(req)), propertyKeys));
    }
    const page = parseListPage(req);
    const { persons, count, through } = await listPersons(deps, req.project!.id, filters, page);
    const results = serializePersons(persons, displayPropertiesOf(req));
    await sendJson(res, limitOffsetPage(req, { count, limit: page.limit, offset: page.offset, results }, { persons_through: through }));
  });

  // PostHog: persons are created by ingestion ($identify, $set, …), never through this API.
  routes.post(base, { ...write, summary: 'Refused: persons are created by ingestion', body: ignoredBody }, () => {
    throw errors.methodNotAllowed('POST', 'Creating persons via this API is not allowed. Please create persons by sending an $identify event.');
  });

  const bulkDeleteExample = () => ({ distinct_ids: ['user-1'], delete_events: false });
  routes.post(
    `${base}/bulk_delete`,
    { ...write, summary: 'Delete persons by distinct ids or ids (optionally their events)', body: bulkDeleteBody, example: bulkDeleteExample },
    async (req, res) => {
      const request = parseBulkDelete(req.body);
      const { found, deleted } = await bulkDeletePersons(deps, actorOf(req), request);
      res.status(202).json({ persons_found: found, persons_deleted: deleted, events_deletion_queued: request.deleteEvents ? deleted : 0 });
    },
  );

  routes.get(`${base}/values`, { ...read, summary: 'Values of a person property with counts' }, async (req, res) => {
    const key = queryText(req, 'key');
    if (key === null) throw errors.validation('This field is required.', 'key', 'required');
    res.json(await personPropertyValues(deps.ch, { teamId: req.project!.id, key, value: queryText(req, 'value') }));
  });

  const activity = { scope: 'activity_log:read', summary: "Activity on the project's persons", list: true, throttle: 'clickhouse' } as const;
  routes.get(`${base}/activity`, activity, async (req, res) => {
    res.json(await activityPage(deps.db, req, { teamId: req.project!.id, scope: PERSONS_ACTIVITY_SCOPE, ...parseActivityPaging(req) }));
  });

  // PostHog's `persons/cohorts/?person_id=<uuid>`: the cohorts the person is in now.
  const cohorts = { scope: 'cohort:read', summary: 'Cohorts a person is in (person_id: uuid or id)', throttle: 'clickhouse' } as const;
  routes.get(`${base}/cohorts`, cohorts, async (req, res) => {
    const raw = queryText(req, 'person_id');
    if (raw === null) throw errors.validation('This field is required.', 'person_id', 'required');
    const ref = parsePersonRef(raw);
    const found = ref === null ? null : await cohortsOfPersonRef(deps, req.project!.id, ref);
    if (found === null) throw errors.notFound();
    res.json({ results: await deps.serializeCohorts(deps.db, found) });
  });
  return routes;
}
