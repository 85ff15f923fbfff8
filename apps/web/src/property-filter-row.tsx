import { PropertyPicker, PropertyValuePicker } from './query-builder/property-pickers';
import { PROPERTY_OPERATORS, textOfValue, valueFromText, type PropertyFilter } from './property-filter';

const TYPE_LABELS: Record<string, string> = { event: 'Event property', person: 'Person property', cohort: 'Cohort' };
const FIELD_LABELS = { kind: 'Filter on', property: 'Property', operator: 'Operator', value: 'Value', cohort: 'Cohort' };

/** What differs between the pages that edit property filters. */
export interface RowOptions {
  /**
   * `on-leave`: text applies when the field is left or Enter is pressed and the value is the text
   * (the builders, whose query then runs once); `as-typed`: applies on every key, equals taking a
   * comma-separated list and greater / less than a number (forms saved later: flags, settings).
   */
  apply: 'on-leave' | 'as-typed';
  /** Kinds the user may choose between (`event`, `person`, `cohort`); one kind: no choice shown. */
  types: string[];
  /** The project whose property names and values the pickers offer. */
  projectId: number;
  /** The project's cohorts, for a `cohort` filter (PostHog's `{"key": "id", "type": "cohort", "value": <id>}`). */
  cohorts?: { id: number; name: string }[];
}

/**
 * One filter's fields and a remove button. With a `rowLabel` the row is a group of that name and
 * each field is named after it ("Set 1 filter 1 property"); without, the fields are "Property", "Value", ….
 */
export function PropertyFilterRow({
  filter,
  apply,
  types,
  projectId,
  cohorts = [],
  rowLabel,
  removeLabel,
  onChange,
  onRemove,
}: RowOptions & {
  filter: PropertyFilter;
  rowLabel?: string;
  removeLabel: string;
  onChange: (patch: Partial<PropertyFilter>) => void;
  onRemove: () => void;
}) {
  const fieldLabel = (field: keyof typeof FIELD_LABELS) => (rowLabel ? `${rowLabel} ${field}` : FIELD_LABELS[field]);
  const parse = (operator: string, text: string) => (apply === 'as-typed' ? valueFromText(operator, text) : text);
  const operator = PROPERTY_OPERATORS.find((o) => o.value === filter.operator);
  const isCohort = filter.type === 'cohort' && types.includes('cohort');
  const remove = (
    <button type="button" class="secondary" aria-label={removeLabel} onClick={onRemove}>
      Remove
    </button>
  );
  // A filter this editor cannot show faithfully (a kind or an operator it does not offer) is kept as it is.
  if (!isCohort && (!types.includes(filter.type) || !operator))
    return (
      <div class="filter-row" role={rowLabel ? 'group' : undefined} aria-label={rowLabel}>
        <p>
          {rowLabel ?? 'Filter'}: <code>{JSON.stringify(filter)}</code> (kept as it is; change it through the API)
        </p>
        {remove}
      </div>
    );
  const kindSelect =
    types.length > 1 ? (
      <label>
        {fieldLabel('kind')}
        <select
          value={filter.type}
          onChange={(e) => {
            const type = e.currentTarget.value;
            if (type === filter.type) return;
            // A cohort filter has its own shape; leaving one starts an empty property filter.
            if (type === 'cohort') onChange({ key: 'id', type, operator: 'in', value: cohorts[0]?.id ?? '' });
            else if (filter.type === 'cohort') onChange({ key: '', type, operator: 'exact', value: parse('exact', '') });
            else onChange({ type });
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
  return (
    <div class="filter-row" role={rowLabel ? 'group' : undefined} aria-label={rowLabel}>
      {kindSelect}
      {isCohort ? (
        <label>
          {fieldLabel('cohort')}
          <select value={String(filter.value ?? '')} onChange={(e) => onChange({ value: Number(e.currentTarget.value) })}>
            {cohorts.length === 0 ? <option value="">No cohorts</option> : null}
            {cohorts.map((cohort) => (
              <option key={cohort.id} value={String(cohort.id)}>
                {cohort.name}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <>
          <PropertyPicker
            projectId={projectId}
            type={filter.type}
            label={fieldLabel('property')}
            apply={apply}
            required={apply === 'as-typed'}
            value={filter.key}
            onCommit={(key) => onChange({ key })}
          />
          <label>
            {fieldLabel('operator')}
            <select
              value={filter.operator}
              onChange={(e) => {
                const next = e.currentTarget.value;
                // The builders keep their one text value as it is; the forms re-read theirs for the new operator.
                if (apply === 'on-leave') return onChange({ operator: next });
                const needsValue = !PROPERTY_OPERATORS.find((o) => o.value === next)?.valueless;
                onChange({ operator: next, value: needsValue ? parse(next, textOfValue(filter.value)) : undefined });
              }}
            >
              {PROPERTY_OPERATORS.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </label>
          {operator?.valueless ? null : (
            <PropertyValuePicker
              projectId={projectId}
              type={filter.type}
              propertyKey={filter.key}
              label={fieldLabel('value')}
              hint={apply === 'as-typed' && (filter.operator === 'exact' || filter.operator === 'is_not') ? ' (comma-separated)' : undefined}
              list={apply === 'as-typed' && (filter.operator === 'exact' || filter.operator === 'is_not')}
              apply={apply}
              value={textOfValue(filter.value)}
              inputMode={operator?.numeric ? 'decimal' : undefined}
              onCommit={(text) => onChange({ value: parse(filter.operator, text) })}
            />
          )}
        </>
      )}
      {remove}
    </div>
  );
}
