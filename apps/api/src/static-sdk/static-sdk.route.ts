import { Router, type Request, type Response } from 'express';
import { errors, sendCacheable } from '@sightline/http';
import type { SdkFiles } from './posthog-js-files';

/** A versioned path never changes content. */
const VERSIONED_CACHE = 'public, max-age=31536000, immutable';
/**
 * `/static/array.js` and the other unversioned names change when Sightline is upgraded to a newer
 * posthog-js, so browsers keep them a day and then revalidate with the ETag.
 */
const UNVERSIONED_CACHE = 'public, max-age=86400';

/**
 * posthog-js's own files under `/static/`, as PostHog's asset host serves them: `array.js` for
 * the HTML snippet, `array.full.js`, and the extension bundles the SDK loads lazily, by default
 * from `/static/<sdk version>/<name>.js` and falling back to `/static/<name>.js?v=<version>`
 * (its `strict_script_versioning: 'fallback'`). Anything else under /static/ is 404.
 */
export function createStaticSdkRouter(files: SdkFiles): Router {
  const router = Router();

  const serve = (req: Request, res: Response, name: string, cacheControl: string) => {
    // Scripts are loaded with crossorigin="anonymous" from any site; no credentials, so `*`.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    const file = files.get(name);
    if (!file) throw errors.notFound(`No SDK file named "${name.slice(0, 100)}".`);
    sendCacheable(req, res, file.body, { contentType: file.contentType, cacheControl, etag: file.etag });
  };

  router.get('/static/:name', (req, res) => serve(req, res, req.params['name'] as string, UNVERSIONED_CACHE));
  router.get('/static/:version/:name', (req, res) => {
    // Another version's file would be the wrong code under an immutable URL: 404, and the SDK
    // falls back to the unversioned name.
    if (req.params['version'] !== files.version) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      throw errors.notFound(`This server has posthog-js ${files.version}, not ${String(req.params['version']).slice(0, 40)}.`);
    }
    serve(req, res, req.params['name'] as string, VERSIONED_CACHE);
  });
  return router;
}
