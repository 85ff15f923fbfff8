import type { Request } from 'express';
import {
  createEventDefinition,
  findEventDefinition,
  listEventDefinitions,
  updateEventDefinition,
  type EventDefinitionRow,
} from '@sightline/event-property-definitions';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { charField, objectBody } from '../http/body-fields';
import { parseBody, parseString, queryInteger } from '../http/drf-fields';
import { loadById } from '../http/load-by-id';
import { limitOffsetPage } from '../http/pagination';
import { RouteTable } from '../http/route-registry';

declare module 'express-serve-static-core' {
  interface Request {
    eventDefinition?: EventDefinitionRow;
  }
}

export const DEFINITIONS_PAGE_SIZE = 100;
/** The longest event name the worker records (longer ones are data sent as a name by mistake). */
const MAX_EVENT_NAME_LENGTH = 200;
/** PostHog's description is a TextField; this bound keeps one row small. */
export const MAX_DESCRIPTION_LENGTH = 4000;

export function searchParam(req: Request): string | null {
  const raw = req.query['search'];
  return typeof raw === 'string' && raw !== '' ? raw.slice(0, 400) : null;
}

export function serializeDefinition(row: EventDefinitionRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    // Events seen since the name was first recorded (not PostHog's 30-day window).
    volume: Number(row.volume),
    created_at: new Date(row.created_at).toISOString(),
    last_seen_at: new Date(row.last_seen_at).toISOString(),
  };
}

export function parseDescription(body: Record<string, unknown>): string | undefined {
  if (body['description'] === undefined || body['description'] === null) return undefined;
  return parseString(body['description'], 'description', { allowBlank: true, maxLength: MAX_DESCRIPTION_LENGTH });
}

/**
 * /api/projects/:id/event_definitions/: the event names the worker has seen, most seen first
 * (`search` matches any part); one by id; a description written on one (PATCH, PostHog's
 * enterprise field); and a name defined before its first event (POST, volume 0).
 */
export function createEventDefinitionsRoutes(db: Sql): RouteTable {
  const routes = new RouteTable();
  const loadDefinition = loadById('id', 'eventDefinition', (teamId, id) => findEventDefinition(db, teamId, id));
  routes.inProject((project) => {
    const read = { scope: 'event_definition:read' } as const;
    const write = { scope: 'event_definition:write' } as const;
    project.get('/event_definitions', { ...read, summary: 'List the event names seen', list: true }, async (req, res) => {
      const limit = queryInteger(req.query['limit'], DEFINITIONS_PAGE_SIZE, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const { rows, count } = await listEventDefinitions(db, req.project!.id, { search: searchParam(req), limit, offset });
      res.json(limitOffsetPage(req, { count, limit, offset, results: rows.map(serializeDefinition) }));
    });
    project.post(
      '/event_definitions',
      {
        ...write,
        summary: 'Define an event name before it is seen (an existing name is answered as it is)',
        body: objectBody({ name: charField(), description: charField() }, ['name']),
        example: () => ({ name: 'checkout_started', description: 'A visitor opened the checkout' }),
      },
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
        const name = parseString(body['name'], 'name', { maxLength: MAX_EVENT_NAME_LENGTH });
        const { row, created } = await createEventDefinition(db, req.project!.id, { name, description: parseDescription(body) ?? '' });
        res.status(created ? 201 : 200).json(serializeDefinition(row));
      },
    );
    project.get('/event_definitions/:id', { ...read, summary: 'Retrieve an event definition' }, loadDefinition, (req, res) => {
      res.json(serializeDefinition(req.eventDefinition!));
    });
    project.patch(
      '/event_definitions/:id',
      { ...write, summary: 'Describe an event definition', body: objectBody({ description: charField() }), example: () => ({ description: 'changed' }) },
      loadDefinition,
      async (req, res) => {
        const description = parseDescription(parseBody(req.body ?? {}));
        const row = await updateEventDefinition(db, req.project!.id, req.eventDefinition!.id, { description });
        if (!row) throw errors.notFound();
        res.json(serializeDefinition(row));
      },
    );
  });
  return routes;
}
