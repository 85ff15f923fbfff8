/**
 * A flag's activity-log change ({field, before, after}, PostHog's changes_between) in words: each
 * thing that changed as "what: before → after", the filters compared condition set by condition
 * set, variant by variant and payload by payload, so a rollout edit reads "Condition set 1
 * rollout: 30 % → 100 %" rather than two cut JSON documents.
 */
export interface FlagChange {
  field?: string;
  action?: string;
  before?: unknown;
  after?: unknown;
}

interface Filter {
  key?: unknown;
  type?: unknown;
  operator?: unknown;
  value?: unknown;
}
interface ConditionSet {
  properties?: Filter[];
  rollout_percentage?: number | null;
  variant?: string | null;
}
interface Variant {
  key?: string;
  name?: string;
  rollout_percentage?: number;
}
interface Filters {
  groups?: ConditionSet[];
  multivariate?: { variants?: Variant[] } | null;
  payloads?: Record<string, unknown>;
  aggregation_group_type_index?: number | null;
}

const FIELD_NAMES: Record<string, string> = {
  active: 'Enabled',
  name: 'Description',
  key: 'Key',
  deleted: 'Deleted',
  ensure_experience_continuity: 'Persist across authentication',
  rollout_percentage: 'Rollout',
  analytics_dashboards: 'Analytics dashboards',
  tags: 'Tags',
};
const OPERATORS: Record<string, string> = {
  exact: '=',
  is_not: '≠',
  icontains: 'contains',
  not_icontains: "doesn't contain",
  regex: '~',
  not_regex: '!~',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  is_set: 'is set',
  is_not_set: 'is not set',
  in: 'in',
  not_in: 'not in',
};
/** Longest text one value is shown with; the rest is elided in the middle of nothing important. */
const MAX_VALUE = 60;

/** A value as a person reads it: text unquoted when plain, lists comma-separated, true/false as on/off for switches. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(none)';
  if (Array.isArray(value)) return value.length ? value.map(valueText).join(', ') : '(none)';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

const percent = (value: number | null | undefined) => (value === null || value === undefined ? '100 %' : `${value} %`);

function filterText(filter: Filter): string {
  if (filter.type === 'cohort') return `in cohort ${valueText(filter.value)}`;
  const operator = OPERATORS[String(filter.operator ?? 'exact')] ?? String(filter.operator);
  if (filter.operator === 'is_set' || filter.operator === 'is_not_set') return `${valueText(filter.key)} ${operator}`;
  return `${valueText(filter.key)} ${operator} ${valueText(filter.value)}`;
}

const filtersText = (filters: Filter[] | undefined) => (filters?.length ? filters.map(filterText).join(' and ') : 'all users');

function conditionSetText(set: ConditionSet): string {
  return `${filtersText(set.properties)}, ${percent(set.rollout_percentage)}${set.variant ? `, variant ${set.variant}` : ''}`;
}

function filtersChanges(before: Filters, after: Filters): string[] {
  const lines: string[] = [];
  const beforeSets = before.groups ?? [];
  const afterSets = after.groups ?? [];
  for (let i = 0; i < Math.max(beforeSets.length, afterSets.length); i++) {
    const was = beforeSets[i];
    const now = afterSets[i];
    const name = `Condition set ${i + 1}`;
    if (!was) lines.push(`${name} added: ${conditionSetText(now!)}`);
    else if (!now) lines.push(`${name} removed (was ${conditionSetText(was)})`);
    else {
      if (percent(was.rollout_percentage) !== percent(now.rollout_percentage))
        lines.push(`${name} rollout: ${percent(was.rollout_percentage)} → ${percent(now.rollout_percentage)}`);
      if (filtersText(was.properties) !== filtersText(now.properties))
        lines.push(`${name} filters: ${filtersText(was.properties)} → ${filtersText(now.properties)}`);
      if ((was.variant ?? null) !== (now.variant ?? null)) lines.push(`${name} variant: ${valueText(was.variant)} → ${valueText(now.variant)}`);
    }
  }
  const beforeVariants = new Map((before.multivariate?.variants ?? []).map((v) => [v.key ?? '', v]));
  const afterVariants = new Map((after.multivariate?.variants ?? []).map((v) => [v.key ?? '', v]));
  for (const [key, now] of afterVariants) {
    const was = beforeVariants.get(key);
    if (!was) lines.push(`Variant ${key} added: ${percent(now.rollout_percentage)}`);
    else if (was.rollout_percentage !== now.rollout_percentage)
      lines.push(`Variant ${key} rollout: ${percent(was.rollout_percentage)} → ${percent(now.rollout_percentage)}`);
  }
  for (const [key, was] of beforeVariants) if (!afterVariants.has(key)) lines.push(`Variant ${key} removed (was ${percent(was.rollout_percentage)})`);
  const beforePayloads = before.payloads ?? {};
  const afterPayloads = after.payloads ?? {};
  for (const key of new Set([...Object.keys(beforePayloads), ...Object.keys(afterPayloads)])) {
    if (JSON.stringify(beforePayloads[key]) !== JSON.stringify(afterPayloads[key]))
      lines.push(`Payload of ${key}: ${valueText(beforePayloads[key])} → ${valueText(afterPayloads[key])}`);
  }
  if ((before.aggregation_group_type_index ?? null) !== (after.aggregation_group_type_index ?? null))
    lines.push(
      `Match by: ${before.aggregation_group_type_index == null ? 'users' : 'groups'} → ${after.aggregation_group_type_index == null ? 'users' : 'groups'}`,
    );
  return lines;
}

const isEmpty = (value: unknown) =>
  value === null ||
  value === undefined ||
  value === '' ||
  value === false ||
  (Array.isArray(value) && value.length === 0) ||
  (isObject(value) && Object.keys(value).length === 0);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The lines one change reads as (none when a field was written with the value it had). */
export function describeFlagChange(change: FlagChange, created = false): string[] {
  const field = change.field ?? 'flag';
  if (field === 'filters' && (isObject(change.after) || isObject(change.before))) {
    const before = isObject(change.before) ? (change.before as Filters) : {};
    const after = isObject(change.after) ? (change.after as Filters) : {};
    // A new flag's filters are listed as they are, not as a diff from nothing.
    if (created || !isObject(change.before))
      return [
        ...(after.groups ?? []).map((set, i) => `Condition set ${i + 1}: ${conditionSetText(set)}`),
        ...(after.multivariate?.variants ?? []).map((v) => `Variant ${v.key}: ${percent(v.rollout_percentage)}`),
      ];
    return filtersChanges(before, after);
  }
  // A new flag lists what it was made with, not every empty default.
  if (created && field !== 'active' && isEmpty(change.after)) return [];
  const name = FIELD_NAMES[field] ?? `${field[0]!.toUpperCase()}${field.slice(1).replace(/_/g, ' ')}`;
  if (typeof change.before === 'boolean' || typeof change.after === 'boolean') {
    const onOff = (v: unknown) => (v === true ? 'on' : v === false ? 'off' : '(none)');
    return created ? [`${name}: ${onOff(change.after)}`] : [`${name}: ${onOff(change.before)} → ${onOff(change.after)}`];
  }
  if (created) return [`${name}: ${valueText(change.after)}`];
  return [`${name}: ${valueText(change.before)} → ${valueText(change.after)}`];
}
