import type { AnalyticsBench } from './analytics-data';

/**
 * One query of `npm run bench:insights`: our endpoint's answer and the shortest hand-written
 * ClickHouse query giving the same numbers. Each insight kind keeps its queries in its own
 * `insights-<kind>.ts` and is listed once in bench/insights.ts.
 */
export interface InsightBenchKind {
  name: string;
  /** Our answer (over HTTP, refresh=true) as the values to compare (numbers, and names such as a path's edges). */
  ours(bench: AnalyticsBench): Promise<(number | string)[]>;
  /** The hand-written query. */
  baseline: string;
  /** The hand-written query's rows as the same values. */
  numbers(rows: Record<string, unknown>[]): (number | string)[];
}
