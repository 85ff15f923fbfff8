export { createPropertyDefinitionsRoutes } from './property-definitions.route';
