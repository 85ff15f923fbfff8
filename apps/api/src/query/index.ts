export { createQueryRouter, type QueryDeps } from './query.route';
