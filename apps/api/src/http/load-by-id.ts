import type { Request, RequestHandler } from 'express';
import { errors } from '@sightline/http';

/**
 * An object's id as a URL names it: PostHog's integer primary keys. Anything else names no
 * object (null), so it answers 404 without reaching a query with a parameter out of range.
 */
export function parseObjectId(raw: unknown): number | null {
  const text = String(raw ?? '');
  return /^\d{1,9}$/.test(text) ? Number(text) : null;
}

/**
 * Loads the object of req.project that `:param` names into `req[key]`. An id that is not one, or
 * that names no object of this project (another project's included), is DRF's 404, as PostHog's
 * get_object() answers before it looks at the body.
 */
export function loadById<K extends keyof Request>(
  param: string,
  key: K,
  find: (teamId: number, id: number) => Promise<Request[K] | null | undefined>,
): RequestHandler {
  return async (req, _res, next) => {
    const id = parseObjectId(req.params[param]);
    const row = id === null ? null : await find(req.project!.id, id);
    if (row === null || row === undefined) return next(errors.notFound());
    req[key] = row;
    next();
  };
}
