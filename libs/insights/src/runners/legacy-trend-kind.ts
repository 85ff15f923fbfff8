/**
 * The kind a legacy insights/trend/ filter runs as: `shown_as: "Stickiness"` or
 * `insight: "STICKINESS"` is stickiness, `shown_as: "Lifecycle"` or `insight: "LIFECYCLE"` is
 * lifecycle, anything else a trend (PostHog's filter_to_query reads `shown_as` the same way,
 * posthog/hogql_queries/legacy_compatibility/filter_to_query.py).
 */
export function legacyTrendKind(input: Record<string, unknown>): 'TrendsQuery' | 'StickinessQuery' | 'LifecycleQuery' {
  if (input['shown_as'] === 'Stickiness' || input['insight'] === 'STICKINESS') return 'StickinessQuery';
  if (input['shown_as'] === 'Lifecycle' || input['insight'] === 'LIFECYCLE') return 'LifecycleQuery';
  return 'TrendsQuery';
}
