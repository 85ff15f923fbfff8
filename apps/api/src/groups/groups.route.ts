import { absoluteUrlWith } from '../http/pagination';
import { RouteTable } from '../http/route-registry';
import { serializeGroup } from './group.serializer';
import { encodeGroupsCursor } from './groups-cursor';
import { findGroupByKey, groupPropertyDefinitions, groupPropertyValuesOf, listGroupsPage, relatedActors, type GroupsDeps } from './groups.service';

const TYPE_INDEX = { name: 'group_type_index', required: true, example: '0', description: 'The group type (see groups_types), 0 to 4' } as const;

/**
 * PostHog's GroupsViewSet (ee/clickhouse/views/groups.py) for reading: a type's groups (search,
 * property filters, forward cursor), one group by key, the property keys and values of groups,
 * and the actors related to a group or a person. Groups come from ingestion (`$groupidentify`).
 */
export function createGroupsRoutes(deps: GroupsDeps): RouteTable {
  const routes = new RouteTable();
  routes.inProject((project) => {
    const base = '/groups';
    project.get(
      base,
      {
        scope: 'group:read',
        summary: 'List the groups of a type, newest first',
        list: true,
        throttle: 'clickhouse',
        query: [
          TYPE_INDEX,
          { name: 'search', description: 'Properties containing this text, or this exact group key (any case)' },
          { name: 'group_key', description: 'Group keys containing this text (any case)' },
          { name: 'properties', description: 'Group property filters (JSON) of this type' },
          { name: 'cursor', description: 'The next page, as the `next` link carries it' },
          { name: 'limit', description: 'Groups per page, 1 to 1000 (default 100)' },
        ],
      },
      async (req, res) => {
        const { rows, next } = await listGroupsPage(deps, req);
        // PostHog's pagination is forward only: `previous` is always null.
        res.json({
          next: next === null ? null : absoluteUrlWith(req, { cursor: encodeGroupsCursor(next) }),
          previous: null,
          results: rows.map(serializeGroup),
        });
      },
    );
    project.get(
      `${base}/find`,
      {
        scope: 'group:read',
        summary: 'Retrieve the group of a type with a key',
        query: [TYPE_INDEX, { name: 'group_key', required: true, example: 'acme', description: "The group's key" }],
      },
      async (req, res) => {
        // Sightline keeps no notebooks: `notebook` is always null.
        res.json({ ...serializeGroup(await findGroupByKey(deps, req)), notebook: null });
      },
    );
    project.get(
      `${base}/property_definitions`,
      { scope: 'group:read', summary: 'Property keys of the groups of each type, with how many groups have each', throttle: 'clickhouse' },
      async (req, res) => {
        res.json(await groupPropertyDefinitions(deps, req));
      },
    );
    project.get(
      `${base}/property_values`,
      {
        scope: 'group:read',
        summary: 'The most common values of a group property',
        throttle: 'clickhouse',
        query: [
          TYPE_INDEX,
          { name: 'key', required: true, example: 'name', description: 'The property' },
          { name: 'value', description: 'Only values containing this text (any case)' },
        ],
      },
      async (req, res) => {
        res.json(await groupPropertyValuesOf(deps, req));
      },
    );
    project.get(
      `${base}/related`,
      {
        scope: 'group:read',
        summary: 'Persons and groups that shared events with a group or a person in the last 90 days',
        throttle: 'clickhouse',
        query: [
          { name: 'id', required: true, example: 'acme', description: "The group's key (with group_type_index), or a person's uuid" },
          { name: 'group_type_index', required: false, example: '0', description: "The group's type; absent when id is a person" },
        ],
      },
      async (req, res) => {
        res.json(await relatedActors(deps, req));
      },
    );
  });
  return routes;
}
