import {
  findPropertyDefinition,
  listPropertyDefinitions,
  PROPERTY_DEFINITION_TYPES,
  updatePropertyDefinition,
  type PropertyDefinitionKind,
  type PropertyDefinitionRow,
  type PropertyType,
} from '@sightline/event-property-definitions';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { DEFINITIONS_PAGE_SIZE, parseDescription, searchParam, serializeDefinition } from '../event-definitions';
import { charField, choiceField, nullable, objectBody } from '../http/body-fields';
import { parseBody, parseChoice, queryInteger } from '../http/drf-fields';
import { loadById } from '../http/load-by-id';
import { limitOffsetPage } from '../http/pagination';
import { RouteTable } from '../http/route-registry';

declare module 'express-serve-static-core' {
  interface Request {
    propertyDefinition?: PropertyDefinitionRow;
  }
}

/** PostHog's PropertyType choices a definition may be set to by hand. */
const PROPERTY_TYPES: readonly PropertyType[] = ['String', 'Numeric', 'Boolean', 'DateTime'];

const serializeProperty = (row: PropertyDefinitionRow) => ({
  ...serializeDefinition(row),
  type: row.type,
  property_type: row.property_type,
  is_numerical: row.property_type === 'Numeric',
});

/**
 * /api/projects/:id/property_definitions/: the property keys the worker has seen, of events
 * (`type=event`, the default) or persons (`type=person`), with the type inferred from their
 * values; one by id; and PATCH of its description and `property_type` (PostHog's
 * PropertyDefinitionSerializer lets the type be corrected; `is_numerical` follows it).
 */
export function createPropertyDefinitionsRoutes(db: Sql): RouteTable {
  const routes = new RouteTable();
  const loadDefinition = loadById('id', 'propertyDefinition', (teamId, id) => findPropertyDefinition(db, teamId, id));
  routes.inProject((project) => {
    const read = { scope: 'property_definition:read' } as const;
    project.get('/property_definitions', { ...read, summary: 'List the event or person property keys seen', list: true }, async (req, res) => {
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
      res.json(limitOffsetPage(req, { count, limit, offset, results: rows.map(serializeProperty) }));
    });
    project.get('/property_definitions/:id', { ...read, summary: 'Retrieve a property definition' }, loadDefinition, (req, res) => {
      res.json(serializeProperty(req.propertyDefinition!));
    });
    project.patch(
      '/property_definitions/:id',
      {
        scope: 'property_definition:write',
        summary: 'Describe a property definition or set its type',
        body: objectBody({ description: charField(), property_type: nullable(choiceField(PROPERTY_TYPES)) }),
        example: () => ({ property_type: 'Numeric' }),
      },
      loadDefinition,
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        const propertyType =
          body['property_type'] === undefined
            ? undefined
            : body['property_type'] === null
              ? null
              : parseChoice(body['property_type'], 'property_type', PROPERTY_TYPES);
        const row = await updatePropertyDefinition(db, req.project!.id, req.propertyDefinition!.id, { description: parseDescription(body), propertyType });
        if (!row) throw errors.notFound();
        res.json(serializeProperty(row));
      },
    );
  });
  return routes;
}
