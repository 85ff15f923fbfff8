export { createDashboardsRoutes } from './dashboards.route';
