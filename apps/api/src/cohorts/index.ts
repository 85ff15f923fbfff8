export { createCohortsRouter, type CohortsDeps } from './cohorts.route';
