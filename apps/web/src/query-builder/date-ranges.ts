/**
 * PostHog's date range presets (frontend/src/lib/utils.tsx `dateMapping`): each is a `date_from`
 * and, for closed ranges, a `date_to`, with the interval PostHog picks for it.
 */
export interface DateRangePreset {
  label: string;
  date_from: string;
  date_to?: string;
  interval: 'hour' | 'day' | 'month';
}

export const DATE_RANGES: DateRangePreset[] = [
  { label: 'Today', date_from: 'dStart', interval: 'hour' },
  { label: 'Yesterday', date_from: '-1dStart', date_to: '-1dEnd', interval: 'hour' },
  { label: 'Last 24 hours', date_from: '-24h', interval: 'hour' },
  { label: 'Last 7 days', date_from: '-7d', interval: 'day' },
  { label: 'Last 14 days', date_from: '-14d', interval: 'day' },
  { label: 'Last 30 days', date_from: '-30d', interval: 'day' },
  { label: 'Last 90 days', date_from: '-90d', interval: 'day' },
  { label: 'Last 180 days', date_from: '-180d', interval: 'month' },
  { label: 'This month', date_from: 'mStart', interval: 'day' },
  { label: 'Previous month', date_from: '-1mStart', date_to: '-1mEnd', interval: 'day' },
  { label: 'Year to date', date_from: 'yStart', interval: 'month' },
  { label: 'All time', date_from: 'all', interval: 'month' },
];

/** The value a range has in the picker: `date_from` and `date_to` together. */
export const rangeKey = (dateFrom: string, dateTo?: string) => `${dateFrom}|${dateTo ?? ''}`;

export const presetOf = (dateFrom: string, dateTo?: string) => DATE_RANGES.find((r) => rangeKey(r.date_from, r.date_to) === rangeKey(dateFrom, dateTo));

const UNITS: Record<string, [string, string]> = {
  h: ['hour', 'hours'],
  d: ['day', 'days'],
  w: ['week', 'weeks'],
  m: ['month', 'months'],
  q: ['quarter', 'quarters'],
  y: ['year', 'years'],
  M: ['minute', 'minutes'],
};

/** A range the picker does not offer, in words as PostHog's dateFilterToText puts it, else as stored. */
export function describeRange(dateFrom: string, dateTo?: string): string {
  const preset = presetOf(dateFrom, dateTo);
  if (preset) return preset.label;
  const relative = /^-(\d+)([hdwmqyM])$/.exec(dateFrom);
  if (relative && !dateTo) {
    const [one, many] = UNITS[relative[2]!]!;
    return `Last ${relative[1]} ${relative[1] === '1' ? one : many}`;
  }
  return dateTo ? `${dateFrom} – ${dateTo}` : `From ${dateFrom}`;
}

/**
 * The interval PostHog picks for a custom range of days (getDefaultInterval in
 * frontend/src/lib/utils.tsx): two months or more by month, two weeks or more by week, two days
 * or more by day, else by hour. An open end counts to today.
 */
export function customRangeInterval(dateFrom: string, dateTo: string | undefined, today = new Date()): 'hour' | 'day' | 'week' | 'month' {
  const from = Date.parse(`${dateFrom}T00:00:00Z`);
  const to = dateTo ? Date.parse(`${dateTo}T00:00:00Z`) : Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const days = Math.abs(to - from) / 86_400_000;
  const a = new Date(from);
  const b = new Date(to);
  const months = Math.abs((b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() - (b.getUTCDate() < a.getUTCDate() ? 1 : 0));
  if (months >= 2) return 'month';
  if (days >= 14) return 'week';
  if (days >= 2) return 'day';
  return 'hour';
}
