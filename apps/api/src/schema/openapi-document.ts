import type { Scope } from '@sightline/auth';
import { ignoredBody } from '../http/body-fields';
import { type HttpMethod, type RouteDefinition, type RouteTable, requiredScopes } from '../http/route-registry';

/** An OpenAPI 3.1 document: plain JSON. */
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

/** `/api/projects/:project_id/actions` → `/api/projects/{project_id}/actions/` (PostHog's paths end in a slash). */
export function openApiPath(expressPath: string): string {
  const path = expressPath.replace(/:([A-Za-z_]+)/g, '{$1}');
  return path.startsWith('/api/') && !path.endsWith('/') ? `${path}/` : path;
}

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

const COMMON_ERRORS = {
  '400': errorResponse('Validation error (DRF body naming the field in `attr`)'),
  '401': errorResponse('No or invalid personal API key'),
  '403': errorResponse("Missing scope (`API key missing required scope '<object>:<action>'`) or no access to the project"),
  '404': errorResponse('Not found'),
  '429': {
    ...errorResponse('Throttled; `Retry-After` gives the seconds to wait'),
    headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds until a request is allowed again' } },
  },
};

function managementOperation(route: RouteDefinition, operationIds: Set<string>, collections: ReadonlySet<string>): Record<string, unknown> {
  const scopes: readonly Scope[] = requiredScopes(route);
  const parameters: Record<string, unknown>[] = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(m[1] === 'project_id' ? { description: 'A project id, or `@current`' } : {}),
  }));
  if (route.list) {
    parameters.push(
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
      { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0 } },
      { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'csv'] }, description: '`csv`: the results as CSV' },
    );
  }
  for (const parameter of route.query ?? []) {
    parameters.push({
      name: parameter.name,
      in: 'query',
      required: parameter.required ?? false,
      schema: { type: 'string' },
      description: parameter.description,
      ...(parameter.example !== undefined ? { example: parameter.example } : {}),
    });
  }
  let operationId = `${route.method}_${route.path
    .replace(/^\/api\//, '')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/_+$/, '')}`;
  while (operationIds.has(operationId)) operationId += '_';
  operationIds.add(operationId);
  const hasBody = route.method === 'post' || route.method === 'put' || route.method === 'patch';
  const okContent: Record<string, unknown> = { 'application/json': { schema: { type: ['object', 'array'] } } };
  if (route.list) okContent['text/csv'] = { schema: { type: 'string' } };
  return {
    operationId,
    summary: route.summary,
    description: `Required scope: ${scopes.map((s) => `\`${s}\``).join(' and ')}. Rate limit class: ${route.throttle ?? 'general'}.`,
    tags: [tagOf(route.path)],
    security: [{ PersonalApiKey: [] }],
    'x-required-scopes': scopes,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(hasBody
      ? {
          requestBody: {
            required: route.body !== undefined && route.body !== ignoredBody,
            content: {
              'application/json': {
                schema: route.body ?? { type: 'object' },
                ...(route.example ? { example: route.example() } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      // A POST to a list's path creates (201); other POSTs are actions (200).
      [route.method === 'post' && collections.has(route.path) ? '201' : route.method === 'delete' ? '204' : '200']: {
        description: 'Success',
        ...(route.method === 'delete' ? {} : { content: okContent }),
      },
      ...COMMON_ERRORS,
    },
  };
}

/** The resource a path names, for grouping: `/api/projects/{id}/feature_flags/...` → `feature_flags`. */
function tagOf(path: string): string {
  const parts = path.split('/').filter((p) => p && !p.startsWith(':') && p !== 'api');
  if (parts[0] === 'projects' || parts[0] === 'environments' || parts[0] === 'organizations') return parts[1] ?? parts[0];
  return parts[0] ?? 'api';
}

const projectTokenBody = (example: Record<string, unknown>) => ({
  required: true,
  description: 'JSON; posthog-js may also send it as text, base64 or gzip-encoded',
  content: {
    'application/json': {
      schema: { type: 'object', properties: { api_key: { type: 'string', description: 'The project API key (phc_…); `token` is accepted too' } } },
      example,
    },
    'text/plain': { schema: { type: 'string' } },
  },
});

/** Public endpoints SDKs call with the project API key: never personal keys, never throttled. */
function publicPaths(): Record<string, Record<string, unknown>> {
  const event = { api_key: 'phc_…', event: 'signup', distinct_id: 'user-1', properties: { plan: 'pro' } };
  const captureOperation = (path: string, batch: boolean) => ({
    post: {
      operationId: `capture_${path.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '') || 'root'}`,
      summary: batch ? 'Send a batch of events' : 'Send an event (or a batch in `batch`)',
      tags: ['capture'],
      security: [],
      requestBody: projectTokenBody(batch ? { api_key: 'phc_…', batch: [event] } : event),
      responses: {
        '200': { description: 'Accepted: `{"status": 1}`', content: { 'application/json': { schema: { type: 'object' } } } },
        '400': errorResponse('Malformed body'),
        '401': errorResponse('Missing or unknown project API key'),
        '413': errorResponse('Body too large'),
      },
    },
  });
  const evaluate = (shape: string) => ({
    post: {
      operationId: `evaluate_${shape}`,
      summary: `Evaluate the project's flags for a person (${shape} answer shape)`,
      tags: ['flags'],
      security: [],
      parameters: [{ name: 'v', in: 'query', required: false, schema: { type: 'string' }, description: 'Answer version' }],
      requestBody: projectTokenBody({ api_key: 'phc_…', distinct_id: 'user-1', person_properties: { plan: 'pro' } }),
      responses: {
        '200': { description: 'Flag values (`errorsWhileComputingFlags` on partial failure)', content: { 'application/json': { schema: { type: 'object' } } } },
        '400': errorResponse('Malformed body'),
        '401': errorResponse('Missing or unknown project API key'),
      },
    },
  });
  const remoteConfig = (form: 'json' | 'script') => ({
    get: {
      operationId: `remote_config_${form}`,
      summary:
        form === 'json' ? "The project's SDK settings for posthog-js (remote config)" : 'The remote config as a script assigning window._POSTHOG_REMOTE_CONFIG',
      tags: ['sdk'],
      security: [],
      parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' }, description: 'The project API key' }],
      responses: {
        '200': {
          description: 'The remote config',
          content: form === 'json' ? { 'application/json': { schema: { type: 'object' } } } : { 'application/javascript': { schema: { type: 'string' } } },
        },
        '404': errorResponse('Unknown project API key'),
      },
    },
  });
  return {
    '/batch/': captureOperation('batch', true),
    '/capture/': captureOperation('capture', false),
    '/e/': captureOperation('e', false),
    '/i/v0/e/': captureOperation('i/v0/e', false),
    '/track/': captureOperation('track', false),
    '/engage/': captureOperation('engage', false),
    '/decide/': evaluate('decide'),
    '/flags/': evaluate('flags'),
    '/array/{token}/config': remoteConfig('json'),
    '/array/{token}/config.js': remoteConfig('script'),
    '/static/{file}': {
      get: {
        operationId: 'static_sdk_file',
        summary: "posthog-js's own script files (array.js and its extensions), from the pinned package",
        tags: ['sdk'],
        security: [],
        parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The file', content: { 'text/javascript': { schema: { type: 'string' } } } }, '404': errorResponse('No such file') },
      },
    },
  };
}

/** The whole API described from the route registry (management) and the public SDK endpoints. */
export function buildOpenApiDocument(table: RouteTable, version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = publicPaths() as OpenApiDocument['paths'];
  const operationIds = new Set<string>();
  const collections = new Set(table.routes.filter((r) => r.list && r.method === 'get').map((r) => r.path));
  for (const route of table.routes) {
    const path = openApiPath(route.path);
    const item = (paths[path] ??= {});
    const method: HttpMethod = route.method;
    // Express tries the first declaration of a path and method; so does the document.
    if (!item[method]) item[method] = managementOperation(route, operationIds, collections);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sightline API',
      version,
      description:
        'Management API (personal API key with scopes, `Authorization: Bearer phx_…`) and the public capture and flag endpoints (project API key), compatible with PostHog.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { PersonalApiKey: { type: 'http', scheme: 'bearer', description: 'A personal API key, `phx_…`' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['type', 'code', 'detail', 'attr'],
          properties: {
            type: { type: 'string', enum: ['validation_error', 'authentication_error', 'throttled_error', 'invalid_request', 'server_error'] },
            code: { type: 'string' },
            detail: { type: 'string' },
            attr: { type: ['string', 'null'] },
          },
        },
      },
    },
    paths,
  };
}
