import request from 'supertest';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache } from '@sightline/flag-store';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createApiApp, createApiRouteTable } from '../app';
import { compileRequestBodySchema } from '../http/request-body-schema';
import { createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';
import { openApiPath, type OpenApiDocument } from './openapi-document';

describe('GET /api/schema/ and /api/schema/docs/', () => {
  let f: FlagFixture;
  beforeAll(async () => {
    f = await createFlagFixture('apischema', Date.now);
  });
  afterAll(() => f.close());

  it('serves an OpenAPI 3.1 document that validates against the OpenAPI schema and lists every route', async () => {
    const res = await request(f.app).get('/api/schema/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/vnd\.oai\.openapi\+json/);
    const document = JSON.parse(res.text) as OpenApiDocument;
    expect(document.openapi).toBe('3.1.0');

    // The validator ships as an ES module only: imported natively, not through the CommonJS transform.
    const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<typeof import('@seriousme/openapi-schema-validator')>;
    const { Validator } = await importEsm('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);

    const definitions = createFlagDefinitionsCache({ db: f.db, channel: createInMemoryInvalidation() });
    const table = createApiRouteTable({ db: f.db, ch: f.ch, logger: silentLogger(), metrics: createMetrics() }, definitions);
    for (const route of table.routes) {
      const operation = document.paths[openApiPath(route.path)]?.[route.method];
      expect([route.method, route.path, operation?.['summary']]).toEqual([route.method, route.path, route.summary]);
      expect(operation?.['x-required-scopes']).toEqual(typeof route.scope === 'string' ? [route.scope] : route.scope);
      // Validators compile at a route's first request: every declared schema must compile (strict).
      if (route.body) expect(typeof compileRequestBodySchema(route.body)).toBe('function');
    }
    expect(table.routes.filter((route) => route.body).length).toBeGreaterThan(0);
    for (const path of ['/batch/', '/capture/', '/e/', '/i/v0/e/', '/decide/', '/flags/']) expect(document.paths[path]?.['post']).toBeDefined();
    for (const path of ['/array/{token}/config', '/array/{token}/config.js', '/static/{file}']) expect(document.paths[path]?.['get']).toBeDefined();
    // A declared body schema is the document's request schema.
    const keyCreate = document.paths['/api/personal_api_keys/']!['post']!;
    expect(JSON.stringify(keyCreate['requestBody'])).toContain('"required":["label","scopes"]');
  });

  it("serves the document's page with swagger-ui-dist's bundle", async () => {
    const redirect = await request(f.app).get('/api/schema/docs');
    expect([redirect.status, redirect.headers['location']]).toEqual([301, '/api/schema/docs/']);
    const page = await request(f.app).get('/api/schema/docs/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger-ui-bundle.js');
    const bundle = await request(f.app).get('/api/schema/docs/swagger-ui-bundle.js');
    expect([bundle.status, bundle.headers['content-type']]).toEqual([200, expect.stringMatching(/javascript/)]);
    const initializer = await request(f.app).get('/api/schema/docs/swagger-initializer.js');
    expect(initializer.text).toContain("url: '/api/schema/'");
    // Every file the page loads is served.
    for (const [, file] of page.text.matchAll(/(?:href|src)="\.?\/?([^"]+)"/g)) {
      expect([file, (await request(f.app).get(`/api/schema/docs/${file}`)).status]).toEqual([file, 200]);
    }
  });

  it("serves only the viewer's own files of swagger-ui-dist, not the package's other files", async () => {
    const others = [
      'package.json',
      'README.md',
      'LICENSE',
      'absolute-path.js',
      'index.js',
      'swagger-ui-bundle.js.map',
      'swagger-ui.js',
      'oauth2-redirect.html',
    ];
    for (const file of [...others, '..%2fpackage.json', '%2e%2e/package.json', 'swagger-ui.css/']) {
      const res = await request(f.app).get(`/api/schema/docs/${file}`);
      expect([file, res.status]).toEqual([file, 404]);
    }
  });

  it('sends security headers on the management API and CORS only to configured origins', async () => {
    const res = await request(f.app).get('/api/projects/').set('Origin', 'https://evil.example');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBeDefined();
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await request(f.app).options('/api/projects/').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'GET');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();

    const configured = createApiApp({
      db: f.db,
      ch: f.ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      access: { corsOrigins: ['https://app.example'] },
    });
    const allowed = await request(configured).options('/api/projects/').set('Origin', 'https://app.example').set('Access-Control-Request-Method', 'PATCH');
    expect(allowed.status).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(allowed.headers['access-control-allow-headers']).toBe('Authorization,Content-Type');
    expect(allowed.headers['access-control-allow-credentials']).toBeUndefined();
    // Flag evaluation answers any origin, without credentials.
    const flags = await request(configured).options('/flags/').set('Origin', 'https://shop.example').set('Access-Control-Request-Method', 'POST');
    expect(flags.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(flags.headers['access-control-allow-credentials']).toBeUndefined();
  });
});
