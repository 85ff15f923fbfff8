// What the trend and funnel builders share: their pickers (events, properties, values), date
// ranges, how they use the property-filter editor (one value per filter, applied when a field is
// left), the save form, when a result was computed, and who is behind a number.
export { DATE_RANGES, describeRange } from './date-ranges';
export { DateRangePicker, type DateRange } from './date-range-picker';
export { BUILDER_FILTERS } from './filter-options';
export { useEventNames, useTopEvents } from './definition-names';
export { SaveInsight } from './save-insight';
export { ComputedAt } from './computed-at';
export { BreakdownPicker } from './breakdown-picker';
export { ActorsModal, type ActorsSource } from './actors-modal';
export { UnknownName } from './unknown-name';
export { EventPicker, useEventDefinitions, type EventDefinition } from './event-picker';
export { PropertyPicker, PropertyValuePicker, usePropertyDefinitions } from './property-pickers';
export { SearchPicker, type PickerOption } from './search-picker';
export { formFromAddress } from './form-in-address';
