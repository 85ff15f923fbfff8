export { createUsersRouter } from './users.route';
