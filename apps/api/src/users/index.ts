export { createUsersRoutes } from './users.route';
