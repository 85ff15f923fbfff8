import { csvText } from '../http/csv-response';

/** What the CSV reads of a trend (or stickiness) answer. */
export interface CsvSeriesAnswer {
  result: { label: string; data?: number[] | null; days: (string | number)[]; breakdown_value?: unknown; aggregated_value?: number }[];
}

/**
 * `format=csv`: one row per series. Time series: series label, breakdown value, then one
 * column per bucket (headed by its day); total-value displays: label, breakdown value, total.
 */
export function trendResultCsv<A extends CsvSeriesAnswer>(result: A): string {
  const first = result.result[0];
  if (!first) return 'series\r\n';
  const totalValue = first.aggregated_value !== undefined;
  const header = totalValue ? ['series', 'breakdown_value', 'total'] : ['series', 'breakdown_value', ...first.days];
  const rows = result.result.map((s) => (totalValue ? [s.label, s.breakdown_value, s.aggregated_value] : [s.label, s.breakdown_value, ...(s.data ?? [])]));
  return csvText([header, ...rows]);
}
