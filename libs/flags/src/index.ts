export * from './types';
export { bucketHash, flagHash, holdoutHash } from './hash';
export { compileRegex, matchProperty, stringify, parseVersion } from './property-match';
export { parseRelativeDate, parseDateString, parsePropertyDate } from './dates';
export { isInCohort, StoreUnavailableError } from './cohorts';
export { FlagEvaluator, evaluateFlags, reasonOf, type Availability, type DependencyResolver } from './evaluate';
