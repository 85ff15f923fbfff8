export { createApiSchemaRouter } from './schema.route';
export { buildOpenApiDocument, openApiPath, type OpenApiDocument } from './openapi-document';
