import type { Request } from 'express';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import { eventPropertyValues, listEvents } from '@sightline/insights';
import { UUID_PATTERN } from '@sightline/json-input';
import { listDistinctIdsOfPerson } from '@sightline/persons';
import type { Sql } from '@sightline/postgres';
import { PropertyCompileError } from '@sightline/properties';
import { queryInteger } from '../http/drf-fields';
import { absoluteUrlWith } from '../http/pagination';
import { parsePropertiesParam } from '../http/properties-param';
import { RouteTable } from '../http/route-registry';
import { decodeEventsCursor, encodeEventsCursor } from './events-cursor';

/** PostHog's events list: 100 by default; this server answers at most 1000 a page. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const EVENT_FILTER_TYPES = { types: new Set(['event', 'person']) };

function queryText(req: Request, name: string): string | null {
  const raw = req.query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value !== '' ? value : null;
}

function instant(req: Request, name: string): number | null {
  const text = queryText(req, name);
  if (text === null) return null;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw errors.validation('Datetime has wrong format. Use ISO 8601.', name, 'invalid');
  return ms;
}

/**
 * GET /api/environments/:id/events/ (and under /api/projects/): a project's events, newest first,
 * filtered by `event`, `distinct_id`, `person_id` (a person's uuid), `properties` (event and person filters), `after` and
 * `before`, in pages linked by an opaque `cursor` in `next` (PostHog's EventViewSet list).
 */
export function createEventsRoutes(deps: { db: Sql; ch: ClickHouseClient; now: () => number }): RouteTable {
  const routes = new RouteTable();
  routes.inProject((project) => {
    // PostHog's EventViewSet.values: what a value picker offers for an event property, searched here.
    const values = { scope: 'query:read', summary: 'Values of an event property (last 7 days, at most 10)', throttle: 'clickhouse' } as const;
    project.get('/events/values', values, async (req, res) => {
      const key = queryText(req, 'key');
      if (key === null) throw errors.validation('This field is required.', 'key', 'required');
      const raw = req.query['event_name'];
      const eventNames = (Array.isArray(raw) ? raw : [raw]).filter((name): name is string => typeof name === 'string' && name !== '');
      res.json(await eventPropertyValues(deps.ch, { teamId: req.project!.id, key, value: queryText(req, 'value'), eventNames, nowMs: deps.now() }));
    });
    project.get('/events', { scope: 'query:read', summary: 'List events, newest first, in cursor pages', throttle: 'clickhouse' }, async (req, res) => {
      const limit = Math.min(queryInteger(req.query['limit'], DEFAULT_LIMIT, 1), MAX_LIMIT);
      const cursorText = queryText(req, 'cursor');
      const cursor = cursorText === null ? null : decodeEventsCursor(cursorText);
      if (cursorText !== null && cursor === null) throw errors.validation('Invalid cursor.', 'cursor', 'invalid');
      const properties = parsePropertiesParam(queryText(req, 'properties'), EVENT_FILTER_TYPES);
      // A person's events: those of every distinct id the person has now.
      const personId = queryText(req, 'person_id');
      if (personId !== null && !UUID_PATTERN.test(personId)) throw errors.validation('Must be a valid UUID.', 'person_id', 'invalid');
      const distinctIds = personId === null ? null : await listDistinctIdsOfPerson(deps.db, req.project!.id, personId);
      let page;
      try {
        page = await listEvents(deps.ch, {
          teamId: req.project!.id,
          nowMs: deps.now(),
          event: queryText(req, 'event'),
          distinctId: queryText(req, 'distinct_id'),
          distinctIds,
          properties,
          afterMs: instant(req, 'after'),
          beforeMs: instant(req, 'before'),
          cursor,
          limit,
        });
      } catch (error) {
        if (error instanceof PropertyCompileError) throw errors.validation(error.message, 'properties', 'invalid_input');
        throw error;
      }
      const last = page.rows[page.rows.length - 1];
      res.json({
        next: page.hasMore && last ? absoluteUrlWith(req, { cursor: encodeEventsCursor(last.cursor), limit }) : null,
        results: page.rows.map((row) => ({
          id: row.uuid,
          uuid: row.uuid,
          distinct_id: row.distinctId,
          properties: row.properties,
          event: row.event,
          timestamp: row.timestamp,
          person: null,
          elements: [],
          elements_chain: row.elementsChain,
        })),
      });
    });
  });
  return routes;
}
