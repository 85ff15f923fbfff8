import type { RequestHandler } from 'express';
import { activityPage } from '../activity-log';
import { RouteTable } from '../http/route-registry';
import { propertiesChangeBody, setPropertyBody, splitBody, unsetPropertyBody } from './person-bodies';
import { actorOf, displayPropertiesOf, loadPerson } from './person-context';
import {
  deletePerson,
  PERSONS_ACTIVITY_SCOPE,
  setPersonProperty,
  splitPersonApart,
  unsetPersonProperty,
  updatePersonProperties,
} from './person-changes.service';
import { parseActivityPaging, parseDeleteEvents, parsePropertiesChange, parseSetProperty, parseSplit, parseUnsetProperty } from './persons-input';
import type { PersonsDeps } from './persons.service';
import { serializePerson } from './person.serializer';

const read = { scope: 'person:read', throttle: 'clickhouse' } as const;
const write = { scope: 'person:write', throttle: 'clickhouse' } as const;
const propertiesExample = () => ({ properties: { plan: 'pro' } });
const splitSummary = 'Split a person: each distinct id but main_distinct_id becomes a person of its own';

/** The routes of one person, `${base}/:person_id` (its uuid or integer id). */
export function createPersonRoutes(deps: PersonsDeps, base: string): RouteTable {
  const routes = new RouteTable();
  const path = `${base}/:person_id`;
  const load = loadPerson(deps.db);

  routes.get(path, { ...read, summary: 'Retrieve a person by id or uuid' }, load, (req, res) => {
    res.json(serializePerson(req.person!, displayPropertiesOf(req)));
  });

  const update: RequestHandler = async (req, res) => {
    const after = await updatePersonProperties(deps, actorOf(req), req.person!, parsePropertiesChange(req.body));
    res.json(serializePerson(after, displayPropertiesOf(req)));
  };
  routes.patch(path, { ...write, summary: "Change a person's properties", body: propertiesChangeBody, example: propertiesExample }, load, update);
  routes.put(path, { ...write, summary: "Replace a person's properties", body: propertiesChangeBody, example: propertiesExample }, load, update);

  routes.delete(path, { ...write, summary: "Delete a person (delete_events=true queues its events' deletion)" }, load, async (req, res) => {
    await deletePerson(deps, actorOf(req), req.person!, parseDeleteEvents(req));
    res.status(204).end();
  });

  const setExample = () => ({ key: 'plan', value: 'pro' });
  routes.post(
    `${path}/update_property`,
    { ...write, summary: 'Set one person property', body: setPropertyBody, example: setExample },
    load,
    async (req, res) => {
      await setPersonProperty(deps, actorOf(req), req.person!, parseSetProperty(req.body));
      // PostHog answers 202: its change goes through ingestion; here it is already applied.
      res.status(202).end();
    },
  );

  const unsetExample = () => ({ $unset: 'plan' });
  routes.post(
    `${path}/delete_property`,
    { ...write, summary: 'Remove one person property', body: unsetPropertyBody, example: unsetExample },
    load,
    async (req, res) => {
      await unsetPersonProperty(deps, actorOf(req), req.person!, parseUnsetProperty(req.body));
      res.status(201).json({ success: true });
    },
  );

  routes.post(
    `${path}/split`,
    { ...write, summary: splitSummary, body: splitBody, example: () => ({ main_distinct_id: 'user-1' }) },
    load,
    async (req, res) => {
      await splitPersonApart(deps, actorOf(req), req.person!, parseSplit(req.body));
      // PostHog splits in a background task and answers 201 at once; here it is done when answered.
      res.status(201).json({ success: true });
    },
  );

  const activity = { scope: 'activity_log:read', summary: 'Activity on one person', list: true, throttle: 'clickhouse' } as const;
  routes.get(`${path}/activity`, activity, load, async (req, res) => {
    const itemId = String(req.person!.id);
    res.json(await activityPage(deps.db, req, { teamId: req.project!.id, scope: PERSONS_ACTIVITY_SCOPE, itemId, ...parseActivityPaging(req) }));
  });
  return routes;
}
