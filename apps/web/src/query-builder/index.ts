// What the trend and funnel builders share: their pickers' data, date ranges, the filter list
// (one value per filter, applied when a field is left) and the save form.
export { DATE_RANGES } from './date-ranges';
export { useEventNames, useEventPropertyNames, usePersonPropertyNames } from './definition-names';
export { PropertyFiltersEditor } from './property-filters-editor';
export { SaveInsight } from './save-insight';
