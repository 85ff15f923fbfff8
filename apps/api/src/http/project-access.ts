import type { RequestHandler } from 'express';
import { canAccessProject, findProjectById, listProjectsFor, type Project } from '@sightline/accounts';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { INT4_MAX } from './drf-fields';

declare module 'express-serve-static-core' {
  interface Request {
    project?: Project;
  }
}

/**
 * Resolves `:project_id` (a number or `@current`) to a project the caller's key may use: an unknown
 * project is 404 whatever the id looks like, a known one outside the key's organisation or
 * `scoped_teams` is 403. `findProject` reads a project by id (the process's project cache; default
 * the metadata store).
 */
export function projectAccess(db: Sql, findProject: (id: number) => Promise<Project | null> = (id) => findProjectById(db, id)): RequestHandler {
  return async (req, _res, next) => {
    const principal = req.principal;
    if (!principal) return next(errors.notAuthenticated());
    const raw = String(req.params['project_id'] ?? '');
    let project: Project | null;
    if (raw === '@current') project = (await listProjectsFor(db, principal))[0] ?? null;
    // Any other text, and a number past a PostgreSQL integer, names no project: 404 like an unknown id.
    else if (/^\d{1,10}$/.test(raw) && Number(raw) <= INT4_MAX) project = await findProject(Number(raw));
    else project = null;
    if (!project) return next(errors.notFound());
    if (!canAccessProject(principal, project)) return next(errors.permissionDenied('You do not have access to this project.'));
    req.project = project;
    next();
  };
}
