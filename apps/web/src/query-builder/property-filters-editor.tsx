import { useRef } from 'preact/hooks';
import { CommitInput } from '../components';
import { PROPERTY_OPERATORS, type PropertyFilter } from '../property-filter';

/**
 * An editable list of property filters. Keys are offered from the event and person property
 * definitions (datalists `eventList` and `personList`); every control is a plain, labelled input.
 */
export function PropertyFiltersEditor({
  filters,
  onChange,
  label,
  idPrefix,
  eventList,
  personList,
}: {
  filters: PropertyFilter[];
  onChange: (next: PropertyFilter[]) => void;
  /** Names the group for screen readers, e.g. "Filters of series A". */
  label: string;
  idPrefix: string;
  eventList: string;
  personList: string;
}) {
  // Edits made before the page re-renders with the new query build on each other, not on this render's list.
  const latest = useRef(filters);
  latest.current = filters;
  const change = (next: PropertyFilter[]) => {
    latest.current = next;
    onChange(next);
  };
  const update = (index: number, patch: Partial<PropertyFilter>) => change(latest.current.map((f, i) => (i === index ? { ...f, ...patch } : f)));
  // Text changes apply when the field is left or Enter is pressed (`change`), so the query changes once.
  const text = (index: number, field: 'key' | 'value', current: string) => ({
    value: current,
    onCommit: (value: string) => update(index, { [field]: value }),
  });
  return (
    <div class="property-filters" role="group" aria-label={label}>
      {filters.map((filter, index) => {
        const operator = PROPERTY_OPERATORS.find((o) => o.value === filter.operator);
        const name = `${idPrefix}-filter-${index}`;
        return (
          <div class="filter-row" key={index} data-filter-key={filter.key}>
            <label>
              Filter on
              <select name={`${name}-type`} value={filter.type} onChange={(e) => update(index, { type: e.currentTarget.value as PropertyFilter['type'] })}>
                <option value="event">Event property</option>
                <option value="person">Person property</option>
              </select>
            </label>
            <label>
              Property
              <CommitInput name={`${name}-key`} list={filter.type === 'person' ? personList : eventList} {...text(index, 'key', filter.key)} />
            </label>
            <label>
              Operator
              <select name={`${name}-operator`} value={filter.operator} onChange={(e) => update(index, { operator: e.currentTarget.value })}>
                {PROPERTY_OPERATORS.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </select>
            </label>
            {operator?.valueless ? null : (
              <label>
                Value
                <CommitInput
                  name={`${name}-value`}
                  inputMode={operator?.numeric ? 'decimal' : undefined}
                  {...text(index, 'value', String(filter.value ?? ''))}
                />
              </label>
            )}
            <button
              type="button"
              class="secondary"
              aria-label={`Remove filter ${index + 1} of ${label}`}
              onClick={() => change(latest.current.filter((_, i) => i !== index))}
            >
              Remove
            </button>
          </div>
        );
      })}
      <button type="button" class="secondary" onClick={() => change([...latest.current, { key: '', operator: 'exact', value: '', type: 'event' }])}>
        Add filter{filters.length === 0 ? '' : ' (AND)'}
      </button>
    </div>
  );
}
