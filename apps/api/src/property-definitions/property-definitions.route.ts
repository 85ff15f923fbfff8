import { listPropertyDefinitions, PROPERTY_DEFINITION_TYPES, type PropertyDefinitionKind } from '@sightline/event-property-definitions';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { DEFINITIONS_PAGE_SIZE, searchParam, serializeDefinition } from '../event-definitions';
import { queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { RouteTable } from '../http/route-registry';

/**
 * GET /api/projects/:id/property_definitions/: the property keys the worker has seen, of events
 * (`type=event`, the default) or persons (`type=person`), with the type inferred from their values.
 */
export function createPropertyDefinitionsRoutes(db: Sql): RouteTable {
  const routes = new RouteTable();
  routes.inProject((project) => {
    project.get(
      '/property_definitions',
      { scope: 'property_definition:read', summary: 'List the event or person property keys seen', list: true },
      async (req, res) => {
        const type = req.query['type'] ?? 'event';
        if (typeof type !== 'string' || !(type in PROPERTY_DEFINITION_TYPES))
          throw errors.validation(`"${String(type).slice(0, 40)}" is not a valid choice (event or person).`, 'type', 'invalid_choice');
        const limit = queryInteger(req.query['limit'], DEFINITIONS_PAGE_SIZE, 1);
        const offset = queryInteger(req.query['offset'], 0, 0);
        const { rows, count } = await listPropertyDefinitions(db, req.project!.id, {
          type: type as PropertyDefinitionKind,
          search: searchParam(req),
          limit,
          offset,
        });
        const results = rows.map((row) => ({
          ...serializeDefinition(row),
          type: row.type,
          property_type: row.property_type,
          is_numerical: row.property_type === 'Numeric',
        }));
        res.json(limitOffsetPage(req, { count, limit, offset, results }));
      },
    );
  });
  return routes;
}
