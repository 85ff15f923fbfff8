export * from './types';
export { bucketHash, flagHash, holdoutHash } from './hash';
export { compileRegex, matchProperty, stringify, parseVersion, MAX_REGEX_MATCH_STEPS, RegexBudgetExceededError } from './property-match';
export { parseRelativeDate, parseDateString, parsePropertyDate, narrowDateMargin, type DateMargin } from './dates';
export { isInCohort, StoreUnavailableError } from './cohorts';
export { FlagEvaluator, evaluateFlags, reasonOf, type Availability, type DependencyResolver } from './evaluate';
export { storedPropertyFilters, mapStoredGroupProperties } from './stored-filters';
