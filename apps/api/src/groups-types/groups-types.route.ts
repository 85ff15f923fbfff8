import type { MetadataStore } from '@sightline/postgres';
import { charField, integerField, listField, nullable, objectBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';
import { serializeGroupType } from './group-type.serializer';
import { listGroupTypes } from './groups-types.repository';
import { setGroupTypeDefaultColumns, updateGroupTypesMetadata } from './groups-types.service';

/**
 * PostHog's GroupsTypesViewSet (posthog/api/group.py): the project's group types (not paged),
 * their display names (`update_metadata`) and the columns of their groups list
 * (`set_default_columns`). Types come from ingestion, never from this API.
 */
export function createGroupsTypesRoutes(deps: { db: MetadataStore }): RouteTable {
  const { db } = deps;
  const routes = new RouteTable();
  routes.inProject((project) => {
    const base = '/groups_types';
    project.get(base, { scope: 'group:read', summary: "List the project's group types", list: true }, async (req, res) => {
      res.json((await listGroupTypes(db, req.project!.id)).map(serializeGroupType));
    });
    project.patch(
      `${base}/update_metadata`,
      {
        scope: 'group:write',
        summary: 'Rename group types (singular and plural display names); answers every type',
        body: listField({ description: '{group_type_index, name_singular, name_plural}: a name null clears it; group_type is ignored' }),
        example: () => [{ group_type_index: 0, name_singular: 'Organization', name_plural: 'Organizations' }],
      },
      async (req, res) => {
        res.json((await updateGroupTypesMetadata(db, req.project!.id, req.body)).map(serializeGroupType));
      },
    );
    project.put(
      `${base}/set_default_columns`,
      {
        scope: 'group:write',
        summary: "Set the columns a group type's list shows",
        body: objectBody({ group_type_index: integerField, default_columns: nullable(listField(charField())) }, ['group_type_index', 'default_columns']),
        example: () => ({ group_type_index: 0, default_columns: ['name', 'plan'] }),
      },
      async (req, res) => {
        res.json(serializeGroupType(await setGroupTypeDefaultColumns(db, req.project!.id, req.body)));
      },
    );
  });
  return routes;
}
