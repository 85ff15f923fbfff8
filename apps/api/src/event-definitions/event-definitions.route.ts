import type { Request } from 'express';
import { listEventDefinitions, type EventDefinitionRow } from '@sightline/event-property-definitions';
import type { Sql } from '@sightline/postgres';
import { queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { RouteTable } from '../http/route-registry';

export const DEFINITIONS_PAGE_SIZE = 100;

export function searchParam(req: Request): string | null {
  const raw = req.query['search'];
  return typeof raw === 'string' && raw !== '' ? raw.slice(0, 400) : null;
}

export function serializeDefinition(row: EventDefinitionRow) {
  return {
    id: row.id,
    name: row.name,
    // Events seen since the name was first recorded (not PostHog's 30-day window).
    volume: Number(row.volume),
    created_at: new Date(row.created_at).toISOString(),
    last_seen_at: new Date(row.last_seen_at).toISOString(),
  };
}

/** GET /api/projects/:id/event_definitions/: the event names the worker has seen, most seen first; `search` matches any part. */
export function createEventDefinitionsRoutes(db: Sql): RouteTable {
  const routes = new RouteTable();
  routes.inProject((project) => {
    project.get('/event_definitions', { scope: 'event_definition:read', summary: 'List the event names seen', list: true }, async (req, res) => {
      const limit = queryInteger(req.query['limit'], DEFINITIONS_PAGE_SIZE, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const { rows, count } = await listEventDefinitions(db, req.project!.id, { search: searchParam(req), limit, offset });
      res.json(limitOffsetPage(req, { count, limit, offset, results: rows.map(serializeDefinition) }));
    });
  });
  return routes;
}
