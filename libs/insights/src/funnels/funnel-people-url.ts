/** Request fields that say which actors or which page, never part of the funnel itself. */
const ACTOR_FIELDS = new Set([
  'funnel_step',
  'funnel_custom_steps',
  'funnel_step_breakdown',
  'limit',
  'offset',
  'refresh',
  'entrance_period_start',
  'drop_off',
]);

/**
 * Where a funnel step's persons are listed: the project's legacy `persons/funnel/` with the
 * funnel's own filter in the query string (lists and objects as JSON), `funnel_step` (negative:
 * dropped off before it) and, under a breakdown, `funnel_step_breakdown`, as PostHog builds its
 * converted/dropped people URLs from the filter's params (posthog/queries/funnels/base.py).
 */
export function funnelPeopleUrl(projectId: number, request: Record<string, unknown>, funnelStep: number, breakdownValue: unknown): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(request)) {
    if (ACTOR_FIELDS.has(key) || value === undefined || value === null) continue;
    params.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  params.set('funnel_step', String(funnelStep));
  // As JSON, so a text that reads as a number stays a text.
  if (breakdownValue !== undefined) params.set('funnel_step_breakdown', JSON.stringify(breakdownValue));
  return `/api/projects/${projectId}/persons/funnel/?${params.toString()}`;
}
