import { useRef } from 'preact/hooks';
import { CommitInput } from './components';

/** One of PostHog's property filters as the insight endpoints read them. */
export interface PropertyFilter {
  key: string;
  operator: string;
  value?: string | number;
  type: 'event' | 'person';
}

const OPERATORS: { value: string; label: string; valueless?: boolean; numeric?: boolean }[] = [
  { value: 'exact', label: 'equals' },
  { value: 'is_not', label: "doesn't equal" },
  { value: 'icontains', label: 'contains' },
  { value: 'not_icontains', label: "doesn't contain" },
  { value: 'regex', label: 'matches regex' },
  { value: 'gt', label: 'greater than', numeric: true },
  { value: 'lt', label: 'less than', numeric: true },
  { value: 'is_set', label: 'is set', valueless: true },
  { value: 'is_not_set', label: 'is not set', valueless: true },
];

/** The filters that can be sent: a key, and a value unless the operator takes none. */
export function completeFilters(filters: PropertyFilter[] | undefined): PropertyFilter[] {
  return (filters ?? [])
    .filter((f) => f.key !== '' && (OPERATORS.find((o) => o.value === f.operator)?.valueless || (f.value !== undefined && f.value !== '')))
    .map((f) => {
      const operator = OPERATORS.find((o) => o.value === f.operator);
      if (operator?.valueless) return { key: f.key, operator: f.operator, type: f.type };
      const value = operator?.numeric && f.value !== '' && Number.isFinite(Number(f.value)) ? Number(f.value) : f.value;
      return { ...f, value };
    });
}

/** Filters read back from saved insight filters (only event and person filters on plain keys). */
export function filtersFromApi(raw: unknown): PropertyFilter[] {
  const list = Array.isArray(raw) ? raw : raw && typeof raw === 'object' && Array.isArray((raw as { values?: unknown }).values) ? flatten(raw) : [];
  return list
    .filter((f): f is Record<string, unknown> => !!f && typeof f === 'object' && typeof (f as { key?: unknown }).key === 'string')
    .filter((f) => f['type'] === undefined || f['type'] === 'event' || f['type'] === 'person')
    .map((f) => ({
      key: String(f['key']),
      operator: typeof f['operator'] === 'string' ? f['operator'] : 'exact',
      value: Array.isArray(f['value'])
        ? String(f['value'][0] ?? '')
        : typeof f['value'] === 'number'
          ? f['value']
          : f['value'] === undefined
            ? undefined
            : String(f['value']),
      type: f['type'] === 'person' ? 'person' : 'event',
    }));
}

function flatten(group: unknown): unknown[] {
  const values = (group as { values?: unknown[] }).values;
  if (!Array.isArray(values)) return [group];
  return values.flatMap((v) => (v && typeof v === 'object' && Array.isArray((v as { values?: unknown }).values) ? flatten(v) : [v]));
}

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
        const operator = OPERATORS.find((o) => o.value === filter.operator);
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
                {OPERATORS.map((o) => (
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
