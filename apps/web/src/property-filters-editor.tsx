import { useRef } from 'preact/hooks';
import { PropertyFilterRow, type RowOptions } from './property-filter-row';
import type { PropertyFilter } from './property-filter';

/**
 * The app's one editor of a list of property filters: the trend and funnel builders' filters,
 * a flag's condition sets and the project's test-account filters. What differs between them is
 * in `RowOptions` (how text is applied, the kinds offered, how fields are labelled).
 */
export function PropertyFiltersEditor({
  filters,
  onChange,
  label,
  addLabel = filters.length ? 'Add filter (AND)' : 'Add filter',
  newFilter,
  rowLabel,
  ...options
}: {
  filters: PropertyFilter[];
  onChange: (next: PropertyFilter[]) => void;
  /** Names the group for screen readers, e.g. "Filters of series A". */
  label: string;
  /** The add button's text; by default "Add filter", then "Add filter (AND)". */
  addLabel?: string;
  /** The filter the add button appends. */
  newFilter: PropertyFilter;
  /** Names each row and, after it, its fields ("Set 1 filter 1" → "Set 1 filter 1 property"). */
  rowLabel?: (index: number) => string;
} & RowOptions) {
  // Edits made before the page re-renders with the new list build on each other, not on this render's list.
  const latest = useRef(filters);
  latest.current = filters;
  const change = (next: PropertyFilter[]) => {
    latest.current = next;
    onChange(next);
  };
  return (
    <div class="property-filters" role="group" aria-label={label}>
      {filters.map((filter, index) => (
        <PropertyFilterRow
          // A removal re-mounts the rows, so a row's text as typed is never shown on another filter.
          key={`${index}-${filters.length}`}
          {...options}
          filter={filter}
          rowLabel={rowLabel?.(index)}
          removeLabel={rowLabel ? `Remove ${rowLabel(index).toLowerCase()}` : `Remove filter ${index + 1} of ${label}`}
          onChange={(patch) => change(latest.current.map((f, i) => (i === index ? { ...f, ...patch } : f)))}
          onRemove={() => change(latest.current.filter((_, i) => i !== index))}
        />
      ))}
      <button type="button" class="secondary" onClick={() => change([...latest.current, newFilter])}>
        {addLabel}
      </button>
    </div>
  );
}
