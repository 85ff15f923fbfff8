import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache } from '@sightline/flag-store';
import type { JobOperator } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { createApiRouteTable } from '../app';
import { compileRequestBodySchema } from '../http/request-body-schema';
import { buildOpenApiDocument, openApiPath } from './openapi-document';

describe('request bodies in the route table and the API document', () => {
  // Building the table queries nothing: a store or client that is asked fails the test.
  const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('asked')) });
  const definitions = createFlagDefinitionsCache({ db: unused as MetadataStore, channel: createInMemoryInvalidation() });
  const table = createApiRouteTable(
    { db: unused as MetadataStore, ch: unused as never, logger: silentLogger(), metrics: createMetrics(), jobs: { names: [] } as unknown as JobOperator },
    definitions,
  );
  const document = buildOpenApiDocument(table, 'test');
  const takesBody = table.routes.filter((route) => route.method === 'post' || route.method === 'put' || route.method === 'patch');

  it('declares a schema for every route that takes a body, and each compiles', () => {
    expect(takesBody.length).toBeGreaterThan(40);
    expect(takesBody.filter((route) => !route.body).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    for (const route of takesBody) expect(typeof compileRequestBodySchema(route.body!)).toBe('function');
  });

  it('describes each body in the document as declared, never as a bare object', () => {
    for (const route of takesBody) {
      const schema = (document.paths[openApiPath(route.path)]![route.method]!['requestBody'] as { content: Record<string, { schema: object }> }).content[
        'application/json'
      ]!.schema;
      expect([route.method, route.path, schema]).toEqual([route.method, route.path, route.body]);
      expect([route.method, route.path, schema]).not.toEqual([route.method, route.path, { type: 'object' }]);
    }
  });

  it("keeps unknown fields open, as PostHog's serializers ignore them", () => {
    const closed = takesBody.filter((route) => JSON.stringify(route.body).includes('"additionalProperties":false'));
    expect(closed.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });
});
