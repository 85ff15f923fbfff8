import { BREAKDOWN_NULL, BREAKDOWN_OTHER } from '../common/events-sql';
import type { ParsedTrendFilter } from './trend-filter';
import { evaluateFormula, type parseFormula } from './trend-formula';
import type { TrendSeries } from './trend-result';

/**
 * The order of a trend's series as PostHog's runner answers them: breakdown values within a
 * series, and the results of a formula.
 */
/** Ranked values first, then "none", then "other" (PostHog's _breakdown_query_order_by). */
const sentinelOrder = (values: readonly (string | number)[]) =>
  values.some((x) => x === BREAKDOWN_OTHER) ? 2 : values.some((x) => x === BREAKDOWN_NULL) ? 1 : 0;

/** Compares breakdown values as ClickHouse orders them: texts by their bytes, lists item by item. */
function compareValues(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return Buffer.compare(Buffer.from(String(x)), Buffer.from(String(y)));
  }
  return a.length - b.length;
}

/**
 * The order PostHog's trends query answers one series' breakdown values in
 * (trends_query_builder.py): real values, then "none", then "other"; within them the larger
 * series first (the sum of its points, cumulative ones included; a total's value), ties by value.
 */
export function breakdownOrder(a: TrendSeries, b: TrendSeries): number {
  const av = [a.breakdown_value ?? ''].flat();
  const bv = [b.breakdown_value ?? ''].flat();
  const weight = (r: TrendSeries) => r.aggregated_value ?? (r.data ?? []).reduce((x, y) => x + y, 0);
  return sentinelOrder(av) - sentinelOrder(bv) || weight(b) - weight(a) || compareValues(av, bv);
}

/**
 * PostHog's apply_formula: without breakdown or compare one series `Formula (<formula>)`; with
 * them, one per breakdown value (or compare side), series without that value counting as zeros,
 * ordered as apply_formula orders them (below).
 */
export function applyFormula(results: TrendSeries[], filter: ParsedTrendFilter, totalValue: boolean, tree: ReturnType<typeof parseFormula>): TrendSeries[] {
  const seriesCount = filter.series.length;
  const groupKey = (r: TrendSeries) => JSON.stringify([r.compare_label ?? null, r.breakdown_value ?? null]);
  const groups = new Map<string, TrendSeries[]>();
  for (const r of results) {
    const key = groupKey(r);
    if (!groups.has(key)) groups.set(key, Array.from({ length: seriesCount }));
    groups.get(key)![(r.action as { order: number }).order] = r;
  }
  const label = `Formula (${filter.formula})`;
  const computed = [...groups.values()].map((members) => {
    const base = members.find((m) => m !== undefined)!;
    const out: TrendSeries = { ...base, label, action: null };
    if (totalValue) {
      out.aggregated_value =
        evaluateFormula(
          tree,
          members.map((m) => [m?.aggregated_value ?? 0]),
        )[0] ?? 0;
      out.data = null;
      out.count = 0;
    } else {
      const length = base.data!.length;
      out.data = evaluateFormula(
        tree,
        members.map((m) => m?.data ?? Array.from({ length }, () => 0)),
      );
      out.count = out.data.reduce((a, b) => a + b, 0);
    }
    return out;
  });
  // PostHog's apply_formula order: comparing, each period by count; otherwise real values, then
  // "none", then "other", each by value (a total's, else the sum of the points), count, points,
  // and the breakdown value, all descending.
  // A cohort list with "all" is one query per cohort in PostHog, and its formula is applied per
  // cohort, in the list's order (apply_formula's "all" cohort case; test_formula.py test_breakdown_cohort).
  if (filter.breakdowns.some((b) => b.type === 'cohort' && b.property === 'all')) return computed;
  if (filter.compare) return computed.sort((a, b) => (a.compare_label ?? '').localeCompare(b.compare_label ?? '') || b.count - a.count);
  const weight = (r: TrendSeries) => (totalValue ? (r.aggregated_value ?? 0) : (r.data ?? []).reduce((x, y) => x + y, 0));
  const pointsOrder = (a: number[], b: number[]) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return b[i]! - a[i]!;
    return b.length - a.length;
  };
  const valueText = (r: TrendSeries) => JSON.stringify(r.breakdown_value ?? null);
  return computed.sort(
    (a, b) =>
      sentinelOrder([a.breakdown_value ?? ''].flat()) - sentinelOrder([b.breakdown_value ?? ''].flat()) ||
      weight(b) - weight(a) ||
      b.count - a.count ||
      pointsOrder(a.data ?? [], b.data ?? []) ||
      (valueText(a) < valueText(b) ? 1 : valueText(a) > valueText(b) ? -1 : 0),
  );
}
