import type { ProjectTokenChanges } from '@sightline/accounts';
import type { Logger } from '@sightline/logger';
import type { Sql } from '@sightline/postgres';
import { RouteTable } from '../http/route-registry';
import { createProjectsRoutes } from './projects.route';
import { createRolesRoutes } from './roles.route';

/** The organisation and its projects, roles and memberships. */
export function createOrganizationRoutes(db: Sql, options: { tokenChanges?: Pick<ProjectTokenChanges, 'publish'>; logger: Logger }): RouteTable {
  return new RouteTable().include(createProjectsRoutes(db, options), createRolesRoutes(db));
}
export { loadRoleRelations, type RoleRelations } from './role-relations';
export { serializeRoles } from './role.serializer';
export { findRole, findRolesByIds, roleIdsOfUser, type RoleRow } from './roles.repository';
