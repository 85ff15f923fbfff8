export { createLoginRouter, SESSION_TTL_MS } from './login.route';
