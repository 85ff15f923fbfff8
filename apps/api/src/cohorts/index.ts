export { createCohortsRoutes } from './cohorts.route';
export type { CohortsDeps } from './cohorts.service';
export { serializeCohorts } from './cohort.serializer';
