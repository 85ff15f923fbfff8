import type { TrendResult } from '@sightline/insights';

/** A CSV cell: quoted when it holds a comma, quote or line break (RFC 4180). */
const cell = (value: unknown) => {
  const text = value === null || value === undefined ? '' : Array.isArray(value) ? value.join('::') : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/**
 * `format=csv`: one row per series. Time series: series label, breakdown value, then one
 * column per bucket (headed by its day); total-value displays: label, breakdown value, total.
 */
export function trendResultCsv(result: TrendResult): string {
  const first = result.result[0];
  if (!first) return 'series\r\n';
  const totalValue = first.aggregated_value !== undefined;
  const header = totalValue ? ['series', 'breakdown_value', 'total'] : ['series', 'breakdown_value', ...first.days];
  const rows = result.result.map((s) => (totalValue ? [s.label, s.breakdown_value, s.aggregated_value] : [s.label, s.breakdown_value, ...(s.data ?? [])]));
  return [header, ...rows].map((row) => row.map(cell).join(',')).join('\r\n') + '\r\n';
}
