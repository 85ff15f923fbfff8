export { createPersonalApiKeysRoutes, serializePersonalKey } from './personal-api-keys.route';
