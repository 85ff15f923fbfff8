import { RouteTable } from '../http/route-registry';
import { buildOpenApiDocument, openApiPath } from './openapi-document';

const ok = () => undefined;

describe('OpenAPI document from the route registry', () => {
  const table = new RouteTable()
    .get('/api/projects/:project_id/things', { scope: 'insight:read', summary: 'List things', list: true }, ok)
    .post(
      '/api/projects/:project_id/things',
      {
        scope: 'insight:write',
        summary: 'Create a thing',
        body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        example: () => ({ name: 'x' }),
      },
      ok,
    )
    .post('/api/projects/:project_id/things/:thing_id/roll', { scope: ['insight:write', 'person:read'], summary: 'Roll a thing', throttle: 'clickhouse' }, ok)
    .delete('/api/projects/:project_id/things/:thing_id', { scope: 'insight:write', summary: 'Delete a thing' }, ok);
  const document = buildOpenApiDocument(table, '1.2.3');

  it('writes Express paths as OpenAPI templates ending in a slash', () => {
    expect(openApiPath('/api/projects/:project_id/things/:thing_id')).toBe('/api/projects/{project_id}/things/{thing_id}/');
    expect(openApiPath('/flags/definitions')).toBe('/flags/definitions');
  });

  it('describes each route once with its scopes, parameters, body and answers', () => {
    const list = document.paths['/api/projects/{project_id}/things/']!['get']!;
    expect(list).toMatchObject({ summary: 'List things', 'x-required-scopes': ['insight:read'], security: [{ PersonalApiKey: [] }] });
    expect((list['parameters'] as { name: string }[]).map((p) => p.name)).toEqual(['project_id', 'limit', 'offset', 'format']);
    expect(Object.keys((list['responses'] as Record<string, { content?: object }>)['200']!.content!)).toEqual(['application/json', 'text/csv']);

    const create = document.paths['/api/projects/{project_id}/things/']!['post']!;
    expect(create['requestBody']).toEqual({
      required: true,
      content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, example: { name: 'x' } } },
    });
    expect(Object.keys(create['responses'] as object)).toContain('201');

    const roll = document.paths['/api/projects/{project_id}/things/{thing_id}/roll/']!['post']!;
    expect(roll['x-required-scopes']).toEqual(['insight:write', 'person:read']);
    expect(roll['description']).toContain('clickhouse');
    expect(Object.keys(roll['responses'] as object)).toContain('200');
    expect(Object.keys(document.paths['/api/projects/{project_id}/things/{thing_id}/']!['delete']!['responses'] as object)).toContain('204');
  });

  it('includes the public SDK endpoints without a personal key', () => {
    for (const path of ['/batch/', '/capture/', '/decide/', '/flags/']) expect(document.paths[path]!['post']!['security']).toEqual([]);
    expect(document.paths['/array/{token}/config']!['get']).toBeDefined();
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op['operationId']));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
