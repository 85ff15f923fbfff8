export { accessLevels, decideAccessLevels, type ResourceForAccess } from './access-decision';
export { atLeast, DEFAULT_FLAG_ACCESS_LEVELS_INFO, FLAG_ACCESS_LEVELS, type AccessLevel } from './access-levels';
export { controlsFor, serializeControl, setAccessControl, type AccessControlRow } from './access-controls.repository';
export { putAccessControl, type AccessControlChange, type AccessControlScope } from './access-controls.service';
