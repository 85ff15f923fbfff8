export { createEventsRouter } from './events.route';
