export { createPersonsRoutes, MAX_BULK_DELETE } from './persons.route';
export { createPersonsFunnelRoutes } from './persons-funnel.route';
