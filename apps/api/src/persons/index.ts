export { createPersonsRoutes, MAX_BULK_DELETE } from './persons.route';
