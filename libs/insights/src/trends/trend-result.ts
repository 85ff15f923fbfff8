/** One series of a trend answer, as PostHog's legacy trend answer gives it. */
export interface TrendSeries {
  data: number[] | null;
  labels?: string[];
  days: string[];
  count: number;
  aggregated_value?: number;
  label: string;
  filter: Record<string, unknown>;
  action: Record<string, unknown> | null;
  breakdown_value?: string | number | (string | number)[];
  compare?: boolean;
  compare_label?: 'current' | 'previous';
}

/** A trend answer (PostHog's legacy insights/trend/ shape). */
export interface TrendResult {
  result: TrendSeries[];
  next: null;
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
}
