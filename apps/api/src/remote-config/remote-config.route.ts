import { Router, type Request, type Response } from 'express';
import { findProjectByToken, isProjectKeyShaped } from '@sightline/accounts';
import type { FlagDefinitionsCache } from '@sightline/flag-store';
import { errors, sendCacheable } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { buildRemoteConfig, remoteConfigScript } from './remote-config';

export interface RemoteConfigDeps {
  db: Sql;
  definitions: FlagDefinitionsCache;
}

/**
 * Browsers keep a config this long: a settings change (PATCH /api/projects/:id/) or a first flag
 * reaches returning visitors within a minute; the ETag makes the revalidation cheap.
 */
export const REMOTE_CONFIG_MAX_AGE_SECONDS = 60;

/**
 * `GET /array/:token/config` (JSON) and `/array/:token/config.js` (script): the remote config
 * posthog-js loads at init, public and keyed by the project API key. Unknown key: 404.
 */
export function createRemoteConfigRouter(deps: RemoteConfigDeps): Router {
  const router = Router();

  const load = async (req: Request) => {
    const token = req.params['token'] as string;
    if (!isProjectKeyShaped(token) || token.startsWith('phx_')) throw errors.notFound('No project has this API key.');
    let project: Awaited<ReturnType<typeof findProjectByToken>>;
    let hasFeatureFlags: boolean;
    try {
      project = await findProjectByToken(deps.db, token);
      hasFeatureFlags = project ? (await deps.definitions.get(project.id)).definitions.flags.some((f) => f.active) : false;
    } catch (error) {
      req.log.error({ err: error }, 'remote config: the project store is unavailable');
      throw errors.unavailable('The project store is unavailable; retry later.', 5);
    }
    if (!project) throw errors.notFound('No project has this API key.');
    return buildRemoteConfig(project.api_token, project, hasFeatureFlags);
  };

  const cacheControl = `public, max-age=${REMOTE_CONFIG_MAX_AGE_SECONDS}`;
  // Loaded from any site: by fetch (JSON) and by <script crossorigin="anonymous"> (config.js),
  // neither with credentials, so `*` is the right answer and nothing varies by origin. Set
  // before the lookup, so a 404 is readable too.
  const anyOrigin = (res: Response) => res.setHeader('Access-Control-Allow-Origin', '*');

  router.options(['/array/:token/config', '/array/:token/config.js'], (req, res) => {
    anyOrigin(res);
    res.setHeader('Access-Control-Allow-Methods', 'GET, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'content-type');
    res.status(204).end();
  });
  router.get('/array/:token/config', async (req, res) => {
    anyOrigin(res);
    const config = await load(req);
    sendCacheable(req, res, JSON.stringify(config), { contentType: 'application/json; charset=utf-8', cacheControl });
  });
  router.get('/array/:token/config.js', async (req, res) => {
    anyOrigin(res);
    const config = await load(req);
    sendCacheable(req, res, remoteConfigScript(config['token'] as string, config), { contentType: 'application/javascript; charset=utf-8', cacheControl });
  });
  return router;
}
