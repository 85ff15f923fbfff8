/**
 * One of PostHog's property filters as the app edits it: a flag's release conditions, the
 * project's test-account filters, and the trend and funnel builders' filters. `type` is
 * `event`, `person`, `cohort`, …; `value` is a list for exact/is_not in flag conditions, one
 * text or number in the builders.
 */
export interface PropertyFilter {
  key: string;
  type: string;
  operator: string;
  value?: unknown;
}

/** PostHog's property operators the builders and editors offer (not the cohort and date ones). */
export const PROPERTY_OPERATORS: { value: string; label: string; valueless?: boolean; numeric?: boolean }[] = [
  { value: 'exact', label: 'equals' },
  { value: 'is_not', label: "doesn't equal" },
  { value: 'icontains', label: 'contains' },
  { value: 'not_icontains', label: "doesn't contain" },
  { value: 'regex', label: 'matches regex' },
  { value: 'not_regex', label: "doesn't match regex" },
  { value: 'gt', label: 'greater than', numeric: true },
  { value: 'lt', label: 'less than', numeric: true },
  { value: 'is_set', label: 'is set', valueless: true },
  { value: 'is_not_set', label: 'is not set', valueless: true },
];

/** A value as typed: a list for equals / doesn't equal (comma-separated), a number for greater / less than, else the text. */
export function valueFromText(operator: string, text: string): unknown {
  if (operator === 'exact' || operator === 'is_not')
    return text
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
  if (operator === 'gt' || operator === 'lt') return text.trim() === '' || Number.isNaN(Number(text)) ? text : Number(text);
  return text;
}

/** The text an input shows for a filter's value (a list comma-separated). */
export function textOfValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined || value === null ? '' : String(value);
}
