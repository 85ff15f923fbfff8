export { createGroupsRoutes } from './groups.route';
export type { GroupsDeps } from './groups.service';
