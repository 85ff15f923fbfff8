import { dirname } from 'node:path';
import express, { Router } from 'express';
import { errors } from '@sightline/http';
import type { RouteTable } from '../http/route-registry';
import { buildOpenApiDocument } from './openapi-document';

// The viewer: swagger-ui-dist's own page and bundle, served from node_modules as shipped.
const SWAGGER_UI_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const SERVICE_VERSION = '0.1.0';
/**
 * The files of swagger-ui-dist the viewer's page loads (its index.html), and the page itself:
 * nothing else of the package (package.json, source maps, the unbundled builds, the OAuth
 * redirect page) is served.
 */
const UI_FILES: ReadonlySet<string> = new Set([
  'index.html',
  'index.css',
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-16x16.png',
  'favicon-32x32.png',
]);

/** What the shipped page loads last: points the viewer at this server's document. */
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/api/schema/',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

/** `GET /api/schema/`: the OpenAPI 3.1 document of every route; `GET /api/schema/docs/`: a page showing it. */
export function createApiSchemaRouter(table: RouteTable): Router {
  const router = Router();
  let document: string | null = null;
  router.get('/api/schema', (_req, res) => {
    // Built on first request: the table is complete by then and does not change.
    document ??= JSON.stringify(buildOpenApiDocument(table, SERVICE_VERSION));
    res.type('application/vnd.oai.openapi+json; charset=utf-8').send(document);
  });
  router.get('/api/schema/docs', (req, res, next) => {
    if (req.path.endsWith('/')) return next();
    res.redirect(301, '/api/schema/docs/');
  });
  router.get('/api/schema/docs/swagger-initializer.js', (_req, res) => {
    res.type('text/javascript').send(INITIALIZER);
  });
  const serveUi = express.static(SWAGGER_UI_DIR, { index: 'index.html', fallthrough: false, redirect: false });
  router.use('/api/schema/docs', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // req.path is not decoded: an encoded name never matches an allowed one.
    if (!UI_FILES.has(req.path === '/' ? 'index.html' : req.path.slice(1))) return next(errors.notFound());
    serveUi(req, res, next);
  });
  return router;
}
