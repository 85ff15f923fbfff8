export { createEventDefinitionsRoutes, DEFINITIONS_PAGE_SIZE, parseDescription, searchParam, serializeDefinition } from './event-definitions.route';
