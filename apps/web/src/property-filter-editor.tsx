import { useState } from 'preact/hooks';
import { PROPERTY_OPERATORS, type PropertyFilter } from './property-filter';

const TYPE_LABELS: Record<string, string> = { event: 'Event property', person: 'Person property', cohort: 'Cohort' };

/** A value as typed: a list for equals / doesn't equal (comma-separated), a number for greater / less than, else the text. */
function valueFromText(operator: string, text: string): unknown {
  if (operator === 'exact' || operator === 'is_not')
    return text
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
  if (operator === 'gt' || operator === 'lt') return text.trim() === '' || Number.isNaN(Number(text)) ? text : Number(text);
  return text;
}

function textOfValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined || value === null ? '' : String(value);
}

/**
 * One filter's fields: (type,) property key with suggestions from the datalist `listIds[type]`,
 * operator, value, and a remove button. Every field is labelled `${label} …` for screen readers and tests.
 */
export function PropertyFilterRow({
  filter,
  label,
  listIds,
  types,
  onChange,
  onRemove,
  cohorts = [],
}: {
  filter: PropertyFilter;
  label: string;
  listIds: Record<string, string>;
  /** Types the user may choose between; one type: no choice shown. */
  types: string[];
  onChange: (filter: PropertyFilter) => void;
  onRemove: () => void;
  /** The project's cohorts, for a `cohort` filter (PostHog's `{"key": "id", "type": "cohort", "value": <id>}`). */
  cohorts?: { id: number; name: string }[];
}) {
  const operator = PROPERTY_OPERATORS.find((o) => o.value === filter.operator);
  // The value as typed (a comma being typed survives until the next item follows it).
  const [text, setText] = useState(() => textOfValue(filter.value));
  const exactList = filter.operator === 'exact' || filter.operator === 'is_not';
  const kindSelect =
    types.length > 1 ? (
      <label>
        {label} kind
        <select
          value={filter.type}
          onChange={(e) => {
            const type = e.currentTarget.value;
            if (type === filter.type) return;
            // A cohort filter has its own shape; switching back starts an empty property filter.
            onChange(type === 'cohort' ? { key: 'id', type, operator: 'in', value: cohorts[0]?.id ?? '' } : { key: '', type, operator: 'exact', value: [] });
          }}
        >
          {types.map((type) => (
            <option key={type} value={type}>
              {TYPE_LABELS[type] ?? type}
            </option>
          ))}
        </select>
      </label>
    ) : null;
  if (filter.type === 'cohort' && types.includes('cohort'))
    return (
      <div class="condition" role="group" aria-label={label}>
        {kindSelect}
        <label>
          {label} cohort
          <select value={String(filter.value ?? '')} onChange={(e) => onChange({ ...filter, value: Number(e.currentTarget.value) })}>
            {cohorts.length === 0 ? <option value="">No cohorts</option> : null}
            {cohorts.map((cohort) => (
              <option key={cohort.id} value={String(cohort.id)}>
                {cohort.name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" aria-label={`Remove ${label.toLowerCase()}`} onClick={onRemove}>
          Remove
        </button>
      </div>
    );
  // A filter this editor cannot show faithfully (a cohort, a group, an operator it does not offer) is kept as it is.
  if (!types.includes(filter.type) || !operator)
    return (
      <div class="condition" role="group" aria-label={label}>
        <p>
          {label}: <code>{JSON.stringify(filter)}</code> (kept as it is; change it through the API)
        </p>
        <button type="button" class="secondary" aria-label={`Remove ${label.toLowerCase()}`} onClick={onRemove}>
          Remove
        </button>
      </div>
    );
  return (
    <div class="condition" role="group" aria-label={label}>
      {kindSelect}
      <label>
        {label} property
        <input list={listIds[filter.type]} value={filter.key} required onInput={(e) => onChange({ ...filter, key: e.currentTarget.value })} />
      </label>
      <label>
        {label} operator
        <select
          value={filter.operator}
          onChange={(e) => {
            const next = e.currentTarget.value;
            const needsValue = !PROPERTY_OPERATORS.find((o) => o.value === next)?.valueless;
            onChange({ ...filter, operator: next, value: needsValue ? valueFromText(next, textOfValue(filter.value)) : undefined });
          }}
        >
          {PROPERTY_OPERATORS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
      {!operator?.valueless ? (
        <label>
          {label} value{exactList ? ' (comma-separated)' : ''}
          <input
            value={text}
            onInput={(e) => {
              setText(e.currentTarget.value);
              onChange({ ...filter, value: valueFromText(filter.operator, e.currentTarget.value) });
            }}
          />
        </label>
      ) : null}
      <button type="button" class="secondary" aria-label={`Remove ${label.toLowerCase()}`} onClick={onRemove}>
        Remove
      </button>
    </div>
  );
}
