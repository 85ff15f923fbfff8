// What the trend and funnel builders share: their pickers' data, date ranges, how they use the
// property-filter editor (one value per filter, applied when a field is left) and the save form.
export { DATE_RANGES } from './date-ranges';
export { BUILDER_FILTERS } from './filter-options';
export { useEventNames, useEventPropertyNames, usePersonPropertyNames } from './definition-names';
export { SaveInsight } from './save-insight';
