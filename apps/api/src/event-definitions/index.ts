export { createEventDefinitionsRoutes, DEFINITIONS_PAGE_SIZE, searchParam, serializeDefinition } from './event-definitions.route';
