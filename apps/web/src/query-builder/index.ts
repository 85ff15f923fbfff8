// What the trend and funnel builders share: their pickers' data, date ranges and the save form.
export { DATE_RANGES } from './date-ranges';
export { useEventNames, useEventPropertyNames, usePersonPropertyNames } from './definition-names';
export { SaveInsight } from './save-insight';
