export { createPropertyDefinitionsRouter } from './property-definitions.route';
