import type { RowOptions } from '../property-filter-row';
import type { PropertyFilter } from '../property-filter';

/**
 * How the builders use the property-filter editor: event or person filters, one text value each,
 * applied when a field is left so the query runs once per edit.
 */
export const BUILDER_FILTERS: Pick<RowOptions, 'apply' | 'types'> & { newFilter: PropertyFilter } = {
  apply: 'on-leave',
  types: ['event', 'person'],
  newFilter: { key: '', operator: 'exact', value: '', type: 'event' },
};
