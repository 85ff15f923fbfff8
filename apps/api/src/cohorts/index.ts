export { createCohortsRoutes, type CohortsDeps } from './cohorts.route';
