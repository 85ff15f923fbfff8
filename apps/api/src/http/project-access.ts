import type { RequestHandler } from 'express';
import { canAccessProject, findProjectById, listProjectsFor, type Project } from '@sightline/accounts';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';

declare module 'express-serve-static-core' {
  interface Request {
    project?: Project;
  }
}

/** Resolves `:project_id` (a number or `@current`) to a project the caller's key may use. */
export function projectAccess(db: Sql): RequestHandler {
  return async (req, _res, next) => {
    const principal = req.principal;
    if (!principal) return next(errors.notAuthenticated());
    const raw = String(req.params['project_id'] ?? '');
    let project: Project | null;
    if (raw === '@current') project = (await listProjectsFor(db, principal))[0] ?? null;
    else if (/^\d{1,9}$/.test(raw)) project = await findProjectById(db, Number(raw));
    else return next(errors.validation(`Invalid project id "${raw}".`, 'project_id', 'invalid'));
    if (!project) return next(errors.notFound('Project not found.'));
    if (!canAccessProject(principal, project)) return next(errors.permissionDenied('You do not have access to this project.'));
    req.project = project;
    next();
  };
}
