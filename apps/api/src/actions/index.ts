export { createActionsRoutes } from './actions.route';
