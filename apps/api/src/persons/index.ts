export { createPersonsRoutes } from './persons.route';
export { MAX_BULK_DELETE } from './persons-input';
export { listedPersonsOf, type PersonsDeps } from './persons.service';
export { serializePersons, type ListedPerson, type PersonJson } from './person.serializer';
