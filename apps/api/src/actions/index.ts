export { createActionsRouter } from './actions.route';
