import type { Sql } from '@sightline/postgres';
import { RouteTable } from '../http/route-registry';
import { createProjectsRoutes } from './projects.route';
import { createRolesRoutes } from './roles.route';

/** The organisation and its projects, roles and memberships. */
export function createOrganizationRoutes(db: Sql): RouteTable {
  return new RouteTable().include(createProjectsRoutes(db), createRolesRoutes(db));
}
