import { dirname } from 'node:path';
import express, { Router } from 'express';
import type { RouteTable } from '../http/route-registry';
import { buildOpenApiDocument } from './openapi-document';

// The viewer: swagger-ui-dist's own page and bundle, served from node_modules as shipped.
const SWAGGER_UI_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const SERVICE_VERSION = '0.1.0';

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
  router.use('/api/schema/docs', express.static(SWAGGER_UI_DIR, { index: 'index.html', fallthrough: true, redirect: false }));
  return router;
}
