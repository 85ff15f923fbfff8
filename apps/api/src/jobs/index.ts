export { createJobsRouter } from './jobs.route';
