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
