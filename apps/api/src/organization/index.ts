import type { Sql } from '@sightline/postgres';
import { RouteTable } from '../http/route-registry';
import { createProjectsRoutes, type ProjectsRoutesOptions } from './projects.route';
import { createRolesRoutes } from './roles.route';

/** The organisation and its projects, roles and memberships. */
export function createOrganizationRoutes(db: Sql, options: ProjectsRoutesOptions): RouteTable {
  return new RouteTable().include(createProjectsRoutes(db, options), createRolesRoutes(db));
}
export { loadRoleRelations, type RoleRelations } from './role-relations';
export { serializeRoles } from './role.serializer';
export { findRole, findRolesByIds, roleIdsOfUser, type RoleRow } from './roles.repository';
