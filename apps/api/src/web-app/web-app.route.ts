import { Router, type Request, type Response } from 'express';
import { errors, sendCacheable } from '@sightline/http';
import type { WebAppFiles } from './web-app-files';

/** Hashed file names: new content always gets a new name. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** The page names the current hashed files, so it is revalidated on every load. */
const INDEX_CACHE = 'no-cache';

/**
 * First path segments that belong to the API, the SDK endpoints and the service's own routes: the
 * app's fallback never answers under them, in either mode (the api app alone has no capture routes,
 * and /e there must stay a JSON 404, not the app's page).
 */
export const RESERVED_SEGMENTS: ReadonlySet<string> = new Set([
  'api',
  'capture',
  'batch',
  'decide',
  'flags',
  'e',
  'i',
  'static',
  'array',
  'track',
  'engage',
  's',
  '_health',
  '_ready',
  'metrics',
  'assets',
]);

/**
 * The page's own policy: everything from this origin only, nothing inline, never framed. The app
 * talks to the API on the same origin with the session cookie.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** A path the app's client-side router owns: not reserved, and not a file name (no extension in the last segment). */
export function isAppPath(path: string): boolean {
  const segments = path.split('/').filter(Boolean);
  if (segments.length > 0 && RESERVED_SEGMENTS.has(segments[0]!)) return false;
  const last = segments[segments.length - 1] ?? '';
  return !/\.[A-Za-z0-9]+$/.test(last);
}

/** The web app at `/`: hashed assets under /assets/, and index.html for every app path. */
export function createWebAppRouter(files: WebAppFiles): Router {
  const router = Router();
  router.get('/assets/:name', (req, res) => {
    const file = files.asset(req.params['name'] as string);
    if (!file) throw errors.notFound('No such asset.');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    sendCacheable(req, res, file.body, { contentType: file.contentType, cacheControl: ASSET_CACHE, etag: file.etag });
  });
  const page = (req: Request, res: Response, next: () => void) => {
    if (!isAppPath(req.path)) return next();
    if (!files.index) {
      res.status(503).type('text/plain').send('The web app is not built. Run `npm run build:web` (npm ci does it), then restart Sightline.\n');
      return;
    }
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'same-origin');
    sendCacheable(req, res, files.index.body, { contentType: files.index.contentType, cacheControl: INDEX_CACHE, etag: files.index.etag });
  };
  // Express routes HEAD to GET handlers.
  router.get(/.*/, page);
  return router;
}
