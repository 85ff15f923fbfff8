import { Router } from 'express';
import type { Sql } from '@sightline/postgres';
import { createProjectsRouter } from './projects.route';
import { createRolesRouter } from './roles.route';

/** The organisation and its projects, roles and memberships. */
export function createOrganizationRouter(db: Sql): Router {
  const router = Router();
  router.use(createProjectsRouter(db));
  router.use(createRolesRouter(db));
  return router;
}
