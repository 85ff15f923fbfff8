export { createPersonsRouter, MAX_BULK_DELETE } from './persons.route';
