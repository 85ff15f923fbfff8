export { createCohortsRoutes } from './cohorts.route';
export type { CohortsDeps } from './cohorts.service';
