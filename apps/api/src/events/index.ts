export { createEventsRoutes } from './events.route';
