export { createGroupsTypesRoutes } from './groups-types.route';
export { listGroupTypes, type GroupTypeRow } from './groups-types.repository';
