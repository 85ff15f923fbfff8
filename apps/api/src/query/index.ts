export { createQueryRoutes, type QueryDeps } from './query.route';
