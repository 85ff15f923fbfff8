export { createDashboardsRouter } from './dashboards.route';
