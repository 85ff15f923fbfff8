/**
 * Functions that exist only over a window (ClickHouse's window functions, as PostHog's
 * posthog/hogql/functions/mapping.py lists them): name → allowed argument counts. Aggregates
 * from the function allow-list may also take an OVER clause.
 */
export const WINDOW_ONLY_FUNCTIONS: ReadonlyMap<string, { min: number; max: number }> = new Map(
  Object.entries({
    row_number: { min: 0, max: 0 },
    rank: { min: 0, max: 0 },
    dense_rank: { min: 0, max: 0 },
    percent_rank: { min: 0, max: 0 },
    cume_dist: { min: 0, max: 0 },
    ntile: { min: 1, max: 1 },
    lagInFrame: { min: 1, max: 3 },
    leadInFrame: { min: 1, max: 3 },
    first_value: { min: 1, max: 1 },
    last_value: { min: 1, max: 1 },
    nth_value: { min: 2, max: 2 },
  }),
);
