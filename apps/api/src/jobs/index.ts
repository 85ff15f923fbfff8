export { createJobsRoutes } from './jobs.route';
