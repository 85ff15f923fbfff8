export { createPersonsRoutes, type PersonsRoutesDeps } from './persons.route';
export { createPersonsFunnelRoutes } from './persons-funnel.route';
export { createPersonsPathRoutes } from './persons-path.route';
export { createPersonsRetentionRoutes } from './persons-retention.route';
export { MAX_BULK_DELETE } from './persons-input';
export { listedPersonsOf, type PersonsDeps } from './persons.service';
export { personsCsv, serializePersons, type ListedPerson, type PersonJson } from './person.serializer';
